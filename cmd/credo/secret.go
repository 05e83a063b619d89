package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"credo/engine"
	"credo/handlers/security"
)

const secretDoc = `Create, list or revoke the partition's client secrets (decisions §1). A token comes from a
secret: POST /v2/{partition}/security/tokens/generate.

commands:
  create   create a secret (and its organization, user and person when missing); it is
           printed once, only its hash is stored
  list     list the secrets: identifiers, users, dates and status, never a secret
  revoke   revoke a secret, by the Identifier that list shows, by - (the secret on standard
           input) or after -- (the secret itself)

Run "credo secret <command> -h" for the command's flags. No command prints a secret except
create, once; no error message repeats an argument, which may be a secret.`

// secretVerbs are the synopsis and description of each secret command, for -h.
var secretVerbs = map[string][2]string{
	"create": {"credo secret create [flags]",
		"Create a client secret for the user with --email (created, with its person and organization,\n" +
			"when missing) and print it once. --days is 1 to 3650 (default 90)."},
	"list": {"credo secret list [flags]",
		"List the partition's client secrets: Identifier, user, organization, dates, status. Never a\nsecret or its hash."},
	"revoke": {"credo secret revoke [flags] IDENTIFIER | - | -- SECRET",
		"Revoke a client secret and the tokens made from it: by the Identifier that list shows, by -\n" +
			"(the secret on standard input) or after -- (the secret itself). Prefer the identifier or\n" +
			"standard input, which keep the secret out of the process list and the shell history."},
}

// maxSecretInput bounds what revoke reads from standard input: a secret is 86 characters.
const maxSecretInput = 4096

// secret creates, lists or revokes client secrets (decisions §1). create prints the secret
// once; only its hash is stored. No output of any verb, error messages included, repeats an
// argument that might be a secret.
func secret(ctx context.Context, args []string, stdin io.Reader, stdout, _ io.Writer) error {
	top := newFlags("secret", "credo secret create|list|revoke [flags] [arguments]", secretDoc)
	if len(args) == 0 {
		return top.usage("a command is required: create, list or revoke")
	}
	verb := args[0]
	spec, ok := secretVerbs[verb]
	if !ok {
		if verb == "-h" || verb == "-help" || verb == "--help" {
			return top.parse(args)
		}
		return top.usage("unknown command (not shown: it may be a secret); create, list or revoke")
	}
	cfg := newConfig()
	fs := newFlags("secret "+verb, spec[0], spec[1])
	partition := cfg.partitionFlag(fs.FlagSet, "partition of the secrets")
	var email, org string
	var operator, asJSON bool
	days := daysValue(security.DefaultSecretDays)
	switch verb {
	case "create":
		fs.StringVar(&email, "email", "", "the user's email; created when missing")
		fs.StringVar(&org, "organization", "", "the organization's identifier; created when missing")
		fs.BoolVar(&operator, "operator", false, "make the user an operator (may do everything)")
		fs.Var(&days, "days", fmt.Sprintf("days until the secret expires, 1 to %d", security.MaxSecretDays))
		fs.BoolVar(&asJSON, "json", false, "print {Secret, UserIdentifier, OrganizationIdentifier, Expires}; secret list shows its Identifier")
	case "list":
		fs.BoolVar(&asJSON, "json", false, "print a JSON array")
	}
	cfg.databaseFlags(fs.FlagSet)
	if err := parseSecretFlags(fs, args[1:]); err != nil {
		return err
	}
	var target string
	var err error
	switch {
	case verb != "revoke" && fs.NArg() != 0:
		return fs.usage("credo secret %s takes no arguments, only flags (the arguments are not shown: one may be a secret)", verb)
	case verb == "revoke" && fs.NArg() != 1:
		return fs.usage("credo secret revoke takes one identifier or secret, after the flags (the arguments are not shown)")
	case verb == "revoke":
		if target, err = revokeTarget(fs.Arg(0), stdin); err != nil {
			return err
		}
	}
	if err := cfg.finish(); err != nil {
		return err
	}
	p, err := partition()
	if err != nil {
		return err
	}
	_, db, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	store, _ := db.Store(p)
	switch verb {
	case "revoke":
		if err := security.RevokeSecret(ctx, store, target); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "secret revoked")
		return nil
	case "list":
		return listSecrets(ctx, store, asJSON, stdout)
	}
	res, err := security.CreateSecret(ctx, store, security.SecretOptions{Email: email, Organization: org, Operator: operator, Days: int(days)})
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	fmt.Fprintf(stdout, "Secret:       %s\nIdentifier:   %s\nUser:         %s\nOrganization: %s\nExpires:      %s\n"+
		"This secret is shown once. Get a token:\n  curl -s -X POST http://%s/v2/%s/security/tokens/generate -H 'Content-Type: application/json' -d '{\"Secret\":\"<CLIENT_SECRET>\"}'\n",
		res.Secret, res.Identifier, res.UserIdentifier, res.OrganizationIdentifier, res.Expires, cfg.Addr, p)
	return nil
}

// listSecrets prints the partition's secrets as a table, or as JSON.
func listSecrets(ctx context.Context, store *engine.Store, asJSON bool, stdout io.Writer) error {
	infos, err := security.ListSecrets(ctx, store, time.Now())
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(infos)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "IDENTIFIER\tUSER\tEMAIL\tORGANIZATION\tCREATED\tEXPIRES\tREVOKED\tSTATUS")
	for _, s := range infos {
		email, revoked := "-", "-"
		if s.UserEmail != nil {
			email = *s.UserEmail
		}
		if s.Revoked != nil {
			revoked = s.Revoked.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Identifier, s.UserIdentifier, email,
			s.OrganizationIdentifier, s.Created, s.Expires, revoked, s.Status)
	}
	return tw.Flush()
}

// revokeTarget is what revoke names: the argument, or with "-" the first line of stdin.
func revokeTarget(arg string, stdin io.Reader) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, maxSecretInput)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the secret from standard input: %w", err)
	}
	if s := strings.TrimSpace(line); s != "" {
		return s, nil
	}
	return "", usageErrorf("credo secret revoke -: standard input holds no secret")
}

// parseSecretFlags parses the flags of a secret command without ever repeating an argument:
// a secret is base64url and may start with '-', where the flag package would take it for an
// unknown flag and print it. -h is a helpRequest, as for every command.
func parseSecretFlags(fs *flags, args []string) error {
	if err := screenFlags(fs.FlagSet, args); err != nil {
		return fs.usage("%v", err)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpRequest{fs.help()}
		}
		return fs.usage("the flags are not right (the arguments are not shown)")
	}
	return nil
}

// screenFlags finds what fs.Parse would refuse in args and says so naming only fs's own
// flags. It walks args as the flag package does: flags until "--", "-" or the first argument
// that does not start with '-'; a non-boolean flag without "=" takes the next argument.
func screenFlags(fs *flag.FlagSet, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return nil
		}
		name := strings.TrimPrefix(a[1:], "-")
		value, hasValue := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, value, hasValue = name[:j], name[j+1:], true
		}
		f := fs.Lookup(name)
		switch {
		case f == nil && (name == "h" || name == "help"):
			return nil // fs.Parse answers flag.ErrHelp
		case f == nil:
			return fmt.Errorf("argument %d starts with - but is not a flag (it is not shown: it may be a secret); "+
				"to revoke a secret that starts with -, put -- before it, or give - and send the secret on standard input", i+1)
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if _, err := strconv.ParseBool(value); hasValue && err != nil {
				return fmt.Errorf("--%s takes no value, or true or false", name)
			}
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if err := f.Value.Set(value); err != nil {
			return fmt.Errorf("--%s %v", name, err)
		}
	}
	return nil
}

// daysValue is the --days flag: a whole number of days from 1 to security.MaxSecretDays. Its
// error does not repeat the value given.
type daysValue int

func (d *daysValue) String() string { return strconv.Itoa(int(*d)) }

func (d *daysValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > security.MaxSecretDays {
		return fmt.Errorf("must be a whole number of days from 1 to %d (0 would make a secret that is already expired)", security.MaxSecretDays)
	}
	*d = daysValue(n)
	return nil
}
