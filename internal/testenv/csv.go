package testenv

import (
	"fmt"
	"strings"
)

// CSVValue is a string that tests of CSV output store and expect back byte for byte: a line
// feed, a CRLF and a lone CR inside the value, a double quote, a comma, and blanks at both ends.
const CSVValue = " lead \"quoted\", comma\nline feed\r\ncrlf\rcr trail "

// ReadCSV reads CSV strictly as RFC 4180 writes it — rows ended by CRLF (the last one may lack
// it), fields quoted or not, "" for a quote inside a quoted field — and keeps every byte of a
// field as it is. It is the oracle of the tests: encoding/csv's Reader turns a CRLF inside a
// quoted field into LF, so it cannot tell whether a writer kept one.
func ReadCSV(data string) ([][]string, error) {
	var rows [][]string
	var row []string
	for i := 0; i < len(data); {
		var field strings.Builder
		if data[i] == '"' {
			i++
			for {
				j := strings.IndexByte(data[i:], '"')
				if j < 0 {
					return nil, fmt.Errorf("csv: row %d: unterminated quoted field", len(rows))
				}
				field.WriteString(data[i : i+j])
				i += j + 1
				if i < len(data) && data[i] == '"' {
					field.WriteByte('"')
					i++
					continue
				}
				break
			}
		} else {
			j := strings.IndexAny(data[i:], ",\r\n\"")
			if j < 0 {
				j = len(data) - i
			}
			if i+j < len(data) && data[i+j] == '"' {
				return nil, fmt.Errorf("csv: row %d: a quote inside an unquoted field", len(rows))
			}
			field.WriteString(data[i : i+j])
			i += j
		}
		row = append(row, field.String())
		switch {
		case i == len(data):
			rows = append(rows, row)
			return rows, nil
		case data[i] == ',':
			i++
			if i == len(data) {
				return nil, fmt.Errorf("csv: row %d: ends after a comma", len(rows))
			}
		case strings.HasPrefix(data[i:], "\r\n"):
			i += 2
			rows, row = append(rows, row), nil
		default:
			return nil, fmt.Errorf("csv: row %d: %q after a field, want a comma or CRLF", len(rows), data[i])
		}
	}
	return rows, nil
}
