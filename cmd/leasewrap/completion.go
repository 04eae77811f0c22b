package main

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/kongdoc"
)

// The sibling executables' command lines as they describe them (written by
// their TestModelDescription), for leasewrap's completions and man pages.
var (
	//go:embed siblings/leasewrap-etcd.json
	etcdModel []byte
	//go:embed siblings/leasewrap-kube.json
	kubeModel []byte
	//go:embed siblings/leasewrap-pg.json
	pgModel []byte
)

// completionCmd prints a shell's completion script.
type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

func (c *completionCmd) Help() string {
	return `Prints the completion script for the shell on stdout. It is generated from
the same command line --help describes, the etcd, kube and pg kinds included.
Packages install it for you; by hand:

  leasewrap completion bash > /usr/share/bash-completion/completions/leasewrap
  leasewrap completion zsh  > /usr/share/zsh/vendor-completions/_leasewrap
  leasewrap completion fish > /usr/share/fish/vendor_completions.d/leasewrap.fish

or for this shell only: source <(leasewrap completion bash).`
}

func (c *completionCmd) Run(out cli.IO) error {
	root, err := describeLeasewrap()
	if err != nil {
		return err
	}
	var script []byte
	switch c.Shell {
	case "bash":
		script = kongdoc.Bash(root, "leasewrap")
	case "zsh":
		script = kongdoc.Zsh(root, "leasewrap")
	case "fish":
		script = kongdoc.Fish(root, "leasewrap")
	}
	_, err = out.Out.Write(script)
	return err
}

// gendocsCmd writes the man pages and completion scripts, for packages
// (make man completions); hidden from --help.
type gendocsCmd struct {
	Man         string `help:"Directory for the man pages (leasewrap.1, leasewrap-KIND.1)." type:"path" placeholder:"DIR"`
	Completions string `help:"Directory for the completion scripts (leasewrap.bash, _leasewrap, leasewrap.fish)." type:"path" placeholder:"DIR"`
}

func (c *gendocsCmd) Run(out cli.IO) error {
	root, err := describeLeasewrap()
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	if c.Man != "" {
		for name, b := range kongdoc.Man(root, "leasewrap") {
			files[filepath.Join(c.Man, name)] = b
		}
	}
	if c.Completions != "" {
		files[filepath.Join(c.Completions, "leasewrap.bash")] = kongdoc.Bash(root, "leasewrap")
		files[filepath.Join(c.Completions, "_leasewrap")] = kongdoc.Zsh(root, "leasewrap")
		files[filepath.Join(c.Completions, "leasewrap.fish")] = kongdoc.Fish(root, "leasewrap")
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(name, files[name], 0o666); err != nil {
			return err
		}
		fmt.Fprintln(out.Out, name)
	}
	return nil
}

// describeLeasewrap is leasewrap's whole command line as data, with the
// siblings' kinds grafted in.
func describeLeasewrap() (*kongdoc.Node, error) {
	k, err := kong.New(&tree{}, append(treeCommands(),
		kong.Name("leasewrap"), kong.Description(description), kong.Vars{"version": version},
		kong.Writers(io.Discard, io.Discard))...)
	if err != nil {
		return nil, err
	}
	root := kongdoc.Describe(k.Model.Node)
	shared, err := kongdoc.VerbFlags(&cli.RunVerbShape{})
	if err != nil {
		return nil, err
	}
	for _, m := range [][]byte{etcdModel, kubeModel, pgModel} {
		sib, err := kongdoc.Read(m)
		if err != nil {
			return nil, err
		}
		if err := root.Graft(sib, shared); err != nil {
			return nil, err
		}
	}
	return root, nil
}
