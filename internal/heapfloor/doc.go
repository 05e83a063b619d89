// Package heapfloor keeps the garbage collector's heap goal a fixed amount above the live heap,
// so that a server whose live heap is a few megabytes does not collect every few milliseconds.
package heapfloor
