// Command kong2 is the second start-up baseline of `make bench`: a static
// Go program that only builds and parses a two-verb kong model, the floor
// of any kong CLI.
package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kong"
)

type cli struct {
	Verbose bool `short:"v" help:"Say more."`
	Hash    struct {
		Key string `arg:"" help:"Key to hash."`
	} `cmd:"" help:"Print a key's hash."`
	Status struct {
		Key  string `arg:"" help:"Key to look up."`
		Root string `help:"Root directory." default:"."`
	} `cmd:"" help:"Print a key's state."`
}

func main() {
	var c cli
	p, err := kong.New(&c, kong.Name("kong2"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(70)
	}
	if _, err := p.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(64)
	}
}
