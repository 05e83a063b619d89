// Package platform serves the platform operations of version 2: health, version, route settings
// and the reformatting of date/time values (api.md "Platform operations (version 2)", decisions §8).
package platform
