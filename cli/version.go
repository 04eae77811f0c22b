package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// commit is stamped by make (-X …/cli.commit=, packaging/version.sh): the
// full commit hash, with "+dirty" for uncommitted changes.
var commit string

// BuildVersion is what an executable knows about its own build: the
// semantic version, the commit and the Go toolchain.
type BuildVersion struct {
	// Version is a release tag, a Go pseudo-version, or "(devel)".
	Version string
	// Commit is the full commit hash (+dirty); empty when not recorded,
	// as in go install pkg@version.
	Commit string
	// Go is the toolchain (go1.26.8) and the target (linux/amd64).
	Go string
}

// ReadVersion combines what make stamped with debug.ReadBuildInfo, so that
// a build by make, go build or go install pkg@version each says something true.
func ReadVersion(stamped string) BuildVersion {
	v := BuildVersion{Version: stamped, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if ok && v.Version == "" {
		v.Version = bi.Main.Version // "(devel)" for go build without VCS stamping
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	if !ok {
		return v
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		rev, modified = commit, false
	}
	if rev == "" {
		// A pseudo-version or a release tag already names the commit.
		base, dirty := strings.CutSuffix(v.Version, "+dirty")
		if i := strings.LastIndexByte(base, '-'); i >= 0 && isHex(base[i+1:]) {
			rev, modified = base[i+1:], dirty
		}
	}
	if rev != "" && modified {
		rev += "+dirty"
	}
	v.Commit = rev
	return v
}

// isHex tells a 12-character commit abbreviation, as pseudo-versions end.
func isHex(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// String is the line --version prints:
//
//	leasewrap v1.2.0 (commit 0123abcd…, go1.26.8 linux/amd64)
func (v BuildVersion) String(name string) string {
	commit := v.Commit
	if commit == "" {
		commit = "not recorded"
	}
	return name + " " + v.Version + " (commit " + commit + ", " + v.Go + ")"
}

// Release is the version when it is a release tag (vX.Y.Z, no
// pseudo-version, no +dirty): the version to pin a sibling at.
func (v BuildVersion) Release() (string, bool) {
	s := v.Version
	if !strings.HasPrefix(s, "v") || strings.ContainsAny(s, "+") || strings.Count(s, ".") != 2 {
		return "", false
	}
	for _, p := range strings.Split(s[1:], ".") {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	return s, true
}

// VersionLine is kong's --version text when args ask for it, else "", so
// a run never pays for reading the build information.
func VersionLine(name, stamped string, args []string) string {
	if !ScanArgs(args).Version {
		return ""
	}
	return ReadVersion(stamped).String(name)
}
