package main

import (
	"context"
	"errors"
	"io"
)

// TEMPORARY: replaced by secret.go before this work lands.
func secret(ctx context.Context, args []string, stdout io.Writer) error {
	return errors.New("secret: not built yet")
}
