package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"credo/engine"
	"credo/resources"
)

// config is what every command needs to reach the data: flags with CREDO_* twins (decisions §1).
type config struct {
	Addr        string
	Database    string
	Partitions  []string
	V1Partition string
	// ExportDir is where gradebook exports are written (CREDO_EXPORT_DIR).
	ExportDir string
	// Descriptors names extra descriptor folders (CREDO_DESCRIPTORS, colon-separated), loaded
	// beside the embedded ones: a maintainer's way to try a new group without rebuilding.
	Descriptors []string
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// bind declares the shared flags on fs with defaults from the environment.
func (c *config) bind(fs *flag.FlagSet) (partitions, descriptors *string) {
	fs.StringVar(&c.Addr, "addr", env("CREDO_ADDR", "127.0.0.1:8080"), "listen address (CREDO_ADDR)")
	fs.StringVar(&c.Database, "database", env("CREDO_DATABASE", "sqlite:./data"), "sqlite:DIR or postgres://… (CREDO_DATABASE)")
	fs.StringVar(&c.V1Partition, "v1-partition", env("CREDO_V1_PARTITION", ""), "partition served by /api (CREDO_V1_PARTITION; default the first partition)")
	partitions = fs.String("partitions", env("CREDO_PARTITIONS", "e01"), "comma-separated partitions (CREDO_PARTITIONS)")
	descriptors = fs.String("descriptors", env("CREDO_DESCRIPTORS", ""), "extra descriptor folders, colon-separated (CREDO_DESCRIPTORS)")
	return partitions, descriptors
}

func (c *config) finish(partitions, descriptors string) error {
	for _, p := range strings.Split(partitions, ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Partitions = append(c.Partitions, p)
		}
	}
	if len(c.Partitions) == 0 {
		return fmt.Errorf("no partitions configured")
	}
	if c.V1Partition == "" {
		c.V1Partition = c.Partitions[0]
	}
	found := false
	for _, p := range c.Partitions {
		found = found || p == c.V1Partition
	}
	if !found {
		return fmt.Errorf("--v1-partition %q is not among --partitions %s", c.V1Partition, strings.Join(c.Partitions, ","))
	}
	c.ExportDir = env("CREDO_EXPORT_DIR", "")
	if c.ExportDir == "" {
		if dir, ok := strings.CutPrefix(c.Database, "sqlite:"); ok {
			c.ExportDir = filepath.Join(dir, "exports")
		} else {
			c.ExportDir = filepath.Join(os.TempDir(), "credo-exports")
		}
	}
	for _, d := range strings.Split(descriptors, ":") {
		if d = strings.TrimSpace(d); d != "" {
			c.Descriptors = append(c.Descriptors, d)
		}
	}
	return nil
}

// parseConfig parses a command's flags (the shared ones plus whatever define adds).
func parseConfig(name string, args []string, out io.Writer, define func(fs *flag.FlagSet)) (*config, *flag.FlagSet, error) {
	c := &config{}
	fs := flag.NewFlagSet("credo "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	parts, descs := c.bind(fs)
	if define != nil {
		define(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if err := c.finish(*parts, *descs); err != nil {
		return nil, nil, err
	}
	return c, fs, nil
}

// registry loads the embedded descriptors and any extra folders.
func (c *config) registry() (*engine.Registry, error) {
	fss := []iofs.FS{resources.FS}
	for _, d := range c.Descriptors {
		fss = append(fss, os.DirFS(d))
	}
	return engine.Load(fss...)
}

// open loads the descriptors and opens (and migrates) every configured partition.
func (c *config) open(ctx context.Context) (*engine.Registry, *engine.Database, error) {
	reg, err := c.registry()
	if err != nil {
		return nil, nil, err
	}
	db, err := engine.Open(ctx, c.Database, c.Partitions, reg)
	if err != nil {
		return nil, nil, err
	}
	return reg, db, nil
}
