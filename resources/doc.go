// Package resources embeds the YAML descriptors of the v2 record groups and internal tables.
package resources

import "embed"

// FS holds every descriptor: public groups under their API path, internal tables under internal/.
//
//go:embed */*.yaml
var FS embed.FS
