package packaging

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The shipped executables: every module linked into one of them is
// listed in NOTICE when it carries a NOTICE file of its own.
var shipped = []string{"./cmd/leasewrap", "./etcd/cmd/leasewrap-etcd", "./kube/cmd/leasewrap-kube", "./pg/cmd/leasewrap-pg"}

const noticeHead = `leasewrap
Copyright 2026 The leasewrap Authors

Licensed under the Apache License, Version 2.0 (LICENSE).

The executables link code of the modules below, whose NOTICE files
(Apache License 2.0, section 4(d)) are reproduced here as they ship.
This file is written by ` + "`make gendocs`" + ` from the modules' own files.
`

// TestNoticeCarriesEveryLinkedNotice: NOTICE reproduces the NOTICE file of
// each module linked into a shipped executable, and nothing else.
// LEASEWRAP_UPDATE_DOCS=1 (make gendocs) rewrites it.
func TestNoticeCarriesEveryLinkedNotice(t *testing.T) {
	var pkgs []string
	for _, p := range shipped {
		if _, err := os.Stat(filepath.Join("..", p)); err == nil {
			pkgs = append(pkgs, p)
		}
	}
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}\t{{.Dir}}{{end}}{{end}}"}, pkgs...)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", strings.Join(pkgs, " "), err)
	}
	dirs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, dir, ok := strings.Cut(l, "\t"); ok {
			dirs[path] = dir
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("want the linked modules, have %d:\n%s", len(dirs), out)
	}
	paths := make([]string, 0, len(dirs))
	for p := range dirs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var want strings.Builder
	want.WriteString(noticeHead)
	for _, p := range paths {
		files, _ := filepath.Glob(filepath.Join(dirs[p], "NOTICE*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&want, "\n== %s (%s)\n\n%s\n", p, filepath.Base(f), strings.TrimSpace(string(b)))
		}
	}
	if os.Getenv("LEASEWRAP_UPDATE_DOCS") == "1" {
		if err := os.WriteFile("../NOTICE", []byte(want.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("../NOTICE")
	if err != nil {
		t.Fatalf("%v: the shipped executables link modules with NOTICE files; run make gendocs", err)
	}
	if string(have) != want.String() {
		t.Fatalf("NOTICE is stale (a linked module's NOTICE was added, changed or dropped); run make gendocs. Want:\n%s", want.String())
	}
}
