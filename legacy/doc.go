// Package legacy serves the hand-written version-1 API under /api: exam events, registrations,
// accommodations, scrap paper and the learning-activity partner callback (api.md, decisions §12, §14).
package legacy
