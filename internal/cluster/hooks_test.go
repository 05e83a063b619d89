package cluster_test

// The descriptors these tests load name hooks that their owners register; link them, as
// cmd/credo does.
import (
	_ "credo/handlers/people"   // group-slug, membership-deletion
	_ "credo/handlers/security" // permission-mask
)
