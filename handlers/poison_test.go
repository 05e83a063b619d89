package handlers

// Every test of the package runs with released body buffers overwritten (see poisonReleased).
func init() { poisonReleased = true }

// PoisonReleased turns the overwriting of released body buffers on or off and returns what it
// was. The request benchmarks turn it off, as the server runs: it cost a get 1.5 µs, 5% of
// BenchmarkRequest/sqlite/W1-get, which is no cost of the server's.
func PoisonReleased(on bool) (was bool) {
	was, poisonReleased = poisonReleased, on
	return was
}
