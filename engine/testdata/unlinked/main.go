// Command unlinked is a program built with the engine alone, none of its drivers nor its
// validator linked: TestUnlinkedFailsClosed runs it and reads what each start-up step says.
package main

import (
	"context"
	"fmt"
	"os"

	"credo/engine"
	"credo/resources"
)

func main() {
	_, err := engine.Load(resources.FS) // its descriptors have validate tags
	fmt.Println("load:", err)
	dir, err := os.MkdirTemp("", "unlinked")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for _, url := range []string{"sqlite:" + dir, "postgres://credo:secret@127.0.0.1:1/credo"} {
		_, err = engine.Open(context.Background(), url, []string{"p1"}, nil)
		fmt.Println("open:", err)
	}
}
