package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"credo/handlers/security"
)

const secretUsage = `usage: credo secret create --partition P [--email E] [--organization UUID] [--operator] [--days 90] [--json]
       credo secret revoke --partition P SECRET_OR_IDENTIFIER`

// secret creates or revokes client secrets (decisions §1). The secret is printed once; only its
// hash is stored.
func secret(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "revoke") {
		return errors.New(secretUsage)
	}
	verb := args[0]
	var partition, email, org string
	var operator, asJSON bool
	var days int
	cfg, fs, err := parseConfig("secret "+verb, args[1:], stdout, func(fs *flag.FlagSet) {
		fs.StringVar(&partition, "partition", "", "partition of the secret (required)")
		if verb == "create" {
			fs.StringVar(&email, "email", "", "the user's email; created when missing")
			fs.StringVar(&org, "organization", "", "the organization's identifier; created when missing")
			fs.BoolVar(&operator, "operator", false, "make the user an operator (may do everything)")
			fs.IntVar(&days, "days", security.DefaultSecretDays, "days until the secret expires")
			fs.BoolVar(&asJSON, "json", false, "print {Secret, UserIdentifier, OrganizationIdentifier, Expires}")
		}
	})
	if err != nil {
		return err
	}
	if partition == "" || (verb == "revoke") != (fs.NArg() == 1) {
		return errors.New(secretUsage)
	}
	if !contains(cfg.Partitions, partition) {
		cfg.Partitions = append(cfg.Partitions, partition)
	}
	_, db, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	store, _ := db.Store(partition)
	if verb == "revoke" {
		if err := security.RevokeSecret(ctx, store, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "secret revoked")
		return nil
	}
	res, err := security.CreateSecret(ctx, store, security.SecretOptions{Email: email, Organization: org, Operator: operator, Days: days})
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	fmt.Fprintf(stdout, "Secret:       %s\nUser:         %s\nOrganization: %s\nExpires:      %s\n"+
		"This secret is shown once. Get a token:\n  curl -s -X POST http://%s/v2/%s/security/tokens/generate -H 'Content-Type: application/json' -d '{\"Secret\":\"<CLIENT_SECRET>\"}'\n",
		res.Secret, res.UserIdentifier, res.OrganizationIdentifier, res.Expires, cfg.Addr, partition)
	return nil
}
