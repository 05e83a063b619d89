package main

import (
	"context"
	"errors"
	"io"
)

// TEMPORARY: replaced by seed.go and secret.go before this work lands.
func seed(ctx context.Context, args []string, stdout io.Writer) error {
	return errors.New("seed: not built yet")
}

func secret(ctx context.Context, args []string, stdout io.Writer) error {
	return errors.New("secret: not built yet")
}
