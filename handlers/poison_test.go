package handlers

// Every test of the package runs with released body buffers overwritten (see poisonReleased).
func init() { poisonReleased = true }
