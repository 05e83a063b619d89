package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"credo/engine"
)

// load reads a JSON array or a CSV file (header row of member names) into one resource of one
// partition, through the same validation as the API, all or nothing.
func load(ctx context.Context, args []string, stdout io.Writer) error {
	var partition, resource string
	cfg, fs, err := parseConfig("load", args, stdout, func(fs *flag.FlagSet) {
		fs.StringVar(&partition, "partition", "", "partition to load into (required)")
		fs.StringVar(&resource, "resource", "", "record name, group path or table, e.g. User, security/users (required)")
	})
	if err != nil {
		return err
	}
	if partition == "" || resource == "" || fs.NArg() != 1 {
		return errors.New("usage: credo load --partition P --resource NAME FILE")
	}
	file := fs.Arg(0)
	if !contains(cfg.Partitions, partition) {
		cfg.Partitions = append(cfg.Partitions, partition)
	}
	reg, db, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	r, ok := reg.ByName(resource)
	if !ok {
		var names []string
		for _, x := range reg.Resources() {
			names = append(names, x.Name)
		}
		return fmt.Errorf("unknown resource %q; known: %s", resource, strings.Join(names, ", "))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	recs, presents, err := decodeFile(r, file, data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	store, _ := db.Store(partition)
	if err := store.InsertAll(ctx, r, recs, presents, ""); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(stdout, "loaded %d %s record(s) into %s\n", len(recs), r.Name, partition)
	return nil
}

// decodeFile reads JSON (a file starting with '[') or CSV.
func decodeFile(r *engine.Resource, name string, data []byte) ([]engine.Record, [][]bool, error) {
	if strings.EqualFold(filepath.Ext(name), ".json") || bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		return r.DecodeArray(data)
	}
	cr := csv.NewReader(bytes.NewReader(data))
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("read CSV header: %w", err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	var recs []engine.Record
	var presents [][]bool
	bulk := &engine.BulkError{}
	for row := 0; ; row++ {
		cells, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read CSV row %d: %w", row, err)
		}
		rec, present, err := r.DecodeRow(header, cells)
		if err != nil {
			var verr *engine.ValidationError
			if errors.As(err, &verr) {
				for _, m := range verr.Members() {
					for _, msg := range verr.Fields[m] {
						bulk.Rows = append(bulk.Rows, engine.RowError{Row: row, Member: m, Msg: msg})
					}
				}
				continue
			}
			return nil, nil, err
		}
		recs = append(recs, rec)
		presents = append(presents, present)
	}
	if len(bulk.Rows) > 0 {
		return nil, nil, bulk
	}
	return recs, presents, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
