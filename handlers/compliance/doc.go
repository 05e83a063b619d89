// Package compliance serves the compliance-summaries plugin command: per-learner compliance
// status counts by department and measurement, computed in the partition's database.
package compliance
