//go:build race

package engine_test

// raceEnabled: the race detector adds allocations and makes sync.Pool drop what it is given,
// so allocation counts are not pinned under it.
const raceEnabled = true
