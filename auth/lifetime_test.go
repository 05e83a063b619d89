package auth

import "testing"

func TestValidateLifetime(t *testing.T) {
	tests := []struct {
		seconds int
		ok      bool
	}{
		{seconds: -1}, {seconds: 0}, {seconds: 59},
		{seconds: 60, ok: true}, {seconds: 3600, ok: true}, {seconds: DefaultLifetime, ok: true},
		{seconds: 31536000, ok: true}, {seconds: 31536001},
	}
	for _, tt := range tests {
		err := ValidateLifetime(tt.seconds)
		if tt.ok {
			checkErr(t, err, nil)
		} else {
			checkErr(t, err, ErrMalformed, "between 60 and 31,536,000 seconds")
		}
	}
}

func TestLifetimeText(t *testing.T) {
	tests := []struct {
		seconds int
		want    string
	}{
		// decisions §7
		{seconds: 3600, want: "3,600 seconds (~1 hour)"},
		{seconds: 86400, want: "86,400 seconds (~1 day)"},
		{seconds: 2592000, want: "2,592,000 seconds (~4 weeks)"},
		{seconds: 31536000, want: "31,536,000 seconds (~52 weeks)"},
		{seconds: 60, want: "60 seconds (~1 minute)"},
		// others
		{seconds: 0, want: "0 seconds (~0 seconds)"},
		{seconds: 1, want: "1 second (~1 second)"},
		{seconds: 59, want: "59 seconds (~59 seconds)"},
		{seconds: 89, want: "89 seconds (~1 minute)"},
		{seconds: 90, want: "90 seconds (~2 minutes)"},
		{seconds: 5400, want: "5,400 seconds (~2 hours)"},
		{seconds: 86399, want: "86,399 seconds (~24 hours)"},
		{seconds: 172800, want: "172,800 seconds (~2 days)"},
		{seconds: 604800, want: "604,800 seconds (~1 week)"},
		{seconds: 1209599, want: "1,209,599 seconds (~2 weeks)"},
		{seconds: 1000000, want: "1,000,000 seconds (~2 weeks)"},
		{seconds: -3600, want: "-3,600 seconds (~-1 hour)"},
	}
	for _, tt := range tests {
		if got := LifetimeText(tt.seconds); got != tt.want {
			t.Errorf("LifetimeText(%d) = %q; want %q", tt.seconds, got, tt.want)
		}
	}
}
