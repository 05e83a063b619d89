// Package engine loads v2 record-group descriptors and serves every standard operation
// (get, exists, create, update, patch, delete, count, list, search) for them through GORM.
package engine
