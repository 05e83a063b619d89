package compliance

// The measurement keys (decisions §9).
const (
	MinMeasurementKey = 1
	MaxMeasurementKey = 18
)

// measurementNames are the names of measurement keys 1..18 (decisions §9), index key-1.
var measurementNames = [MaxMeasurementKey]string{
	"Time-Sensitive Safety Certificate",
	"Additional Compliance Requirement",
	"Mandatory Critical Primary Competency",
	"Mandatory Non-Critical Primary Competency",
	"Mandatory Critical Secondary Competency",
	"Mandatory Non-Critical Secondary Competency",
	"Optional Critical Primary Competency",
	"Optional Non-Critical Primary Competency",
	"Optional Critical Secondary Competency",
	"Optional Non-Critical Secondary Competency",
	"Code of Practice",
	"Safe Operating Practice",
	"Human Resources Document",
	"Module",
	"Training Guide",
	"Site-Specific Operating Procedure",
	"Orientation",
	"HR Learning Module",
}

// MeasurementName returns the name of a measurement key, or "" for a key outside 1..18.
func MeasurementName(key int) string {
	if key < MinMeasurementKey || key > MaxMeasurementKey {
		return ""
	}
	return measurementNames[key-1]
}

// Score is Satisfied ÷ Required floored to two decimals, 1 when Satisfied ≥ Required, and nil
// when nothing is required (decisions §9). It floors in integers so that 2/3 is exactly 0.66
// and no float rounding can lift a score to the next hundredth.
func Score(required, satisfied int64) *float64 {
	if required <= 0 {
		return nil
	}
	s := 1.0
	if satisfied < required {
		s = float64(max(satisfied, 0)*100/required) / 100
	}
	return &s
}
