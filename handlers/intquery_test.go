package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestQueryIntegersHaveOneSpelling (both stores): an integer in a query value — Page, Take,
// their Filter.* aliases and an int member's filter — is written as JSON writes one
// (engine.ParseInteger): a plus sign, a leading zero or a space is a 400 naming the parameter
// as sent, where strconv took +5 and 007 as 5 and 7 (-0 is JSON's, and out of Take's range).
// 5 and a negative filter value are taken.
func TestQueryIntegersHaveOneSpelling(t *testing.T) {
	reg := registry(t)
	achievements := reg.MustByName("Achievement")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			org := uuid.NewString()
			put(t, ts, achievements, map[string]any{"OrganizationIdentifier": org, "AchievementTitle": "Early", "ExpirationLifetimeQuantity": -5})
			for _, c := range []struct{ query, names string }{
				{"Take=%2B5", "Take"},
				{"Take=007", "Take"},
				{"Take=-0", "Take"},
				{"Take=5%20", "Take"},
				{"Page=%2B1", "Page"},
				{"Page=01", "Page"},
				{"Filter.Take=05", "Filter.Take"},
				{"Filter.Page=%2B1", "Filter.Page"},
				{"ExpirationLifetimeQuantity=%2B5", "ExpirationLifetimeQuantity"},
				{"ExpirationLifetimeQuantity=-05", "ExpirationLifetimeQuantity"},
			} {
				res := ts.do(t, "GET", achievements.Path+"?OrganizationIdentifier="+org+"&"+c.query, "").expect(t, c.query, http.StatusBadRequest)
				res.problemNames(t, c.query, c.names)
				if v, _ := url.QueryUnescape(strings.SplitN(c.query, "=", 2)[1]); !strings.Contains(string(res.body), strings.TrimSpace(v)) {
					t.Errorf("%s: problem %s does not quote the value sent", c.query, res.body)
				}
			}
			for _, query := range []string{"Take=5&Page=1", "Filter.Take=5", "ExpirationLifetimeQuantity=-5"} {
				res := ts.do(t, "GET", achievements.Path+"?OrganizationIdentifier="+org+"&"+query, "").expect(t, query, http.StatusOK)
				if !strings.Contains(string(res.body), `"ExpirationLifetimeQuantity":-5`) {
					t.Errorf("%s: %s, want the record", query, res.body)
				}
			}
		})
	}
}
