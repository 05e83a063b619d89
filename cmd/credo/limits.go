package main

import (
	"flag"

	"credo/handlers/limit"
)

// limitFlags declares the abuse-limit flags of serve and returns the function that builds
// the limits once the flags are parsed.
func limitFlags(fs *flag.FlagSet) func() (*limit.Set, error) {
	spec := fs.String("rate-limits", env("CREDO_RATE_LIMITS", ""),
		"abuse limits, comma-separated name=N/s|N/m|N/h|off over the defaults credentials=300/m,secret=60/m,v1secret=1200/m,callback=600/m,export=30/m; or off (CREDO_RATE_LIMITS)")
	proxies := fs.String("trusted-proxies", env("CREDO_TRUSTED_PROXIES", ""),
		"addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For names the client (CREDO_TRUSTED_PROXIES; default none: the peer address is the client)")
	return func() (*limit.Set, error) { return limit.NewSet(*spec, *proxies, nil) }
}
