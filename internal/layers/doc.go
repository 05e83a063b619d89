// Package layers holds the test that keeps credo's packages in their layers (STYLE.md).
package layers
