package cli

import "testing"

func TestBuildVersionString(t *testing.T) {
	for _, tc := range []struct {
		v    BuildVersion
		want string
	}{
		{BuildVersion{"v1.2.0", "0123456789abcdef0123456789abcdef01234567", "go1.26.8 linux/amd64"},
			"leasewrap v1.2.0 (commit 0123456789abcdef0123456789abcdef01234567, go1.26.8 linux/amd64)"},
		{BuildVersion{"v1.2.0", "", "go1.26.8 linux/arm64"},
			"leasewrap v1.2.0 (commit not recorded, go1.26.8 linux/arm64)"},
	} {
		if have := tc.v.String("leasewrap"); have != tc.want {
			t.Errorf("want %q, have %q", tc.want, have)
		}
	}
}

// TestReadVersion: what make stamps wins; a pseudo-version names its
// commit when nothing else does; a test binary has no module version.
func TestReadVersion(t *testing.T) {
	defer func(c string) { commit = c }(commit)
	commit = ""
	for _, tc := range []struct{ stamped, version, commit string }{
		{"", "(devel)", ""},
		{"v1.2.0", "v1.2.0", ""},
		{"v0.0.0-20261202003328-a2af168abcde", "v0.0.0-20261202003328-a2af168abcde", "a2af168abcde"},
		{"v1.2.1-0.20261202003328-a2af168abcde+dirty", "v1.2.1-0.20261202003328-a2af168abcde+dirty", "a2af168abcde+dirty"},
	} {
		v := ReadVersion(tc.stamped)
		if v.Version != tc.version || v.Commit != tc.commit {
			t.Errorf("ReadVersion(%q): want %q commit %q, have %q commit %q", tc.stamped, tc.version, tc.commit, v.Version, v.Commit)
		}
	}
	commit = "0123456789abcdef0123456789abcdef01234567+dirty"
	if v := ReadVersion("v1.2.0+dirty"); v.Commit != commit {
		t.Errorf("stamped commit: want %q, have %q", commit, v.Commit)
	}
}

func TestBuildVersionRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.2.0": true, "v0.10.3": true, "(devel)": false, "v1.2.0+dirty": false,
		"v1.2.1-0.20261202003328-a2af168abcde": false, "v0.0.0-20261202003328-a2af168abcde": false, "v1.2": false,
	} {
		if _, have := (BuildVersion{Version: v}).Release(); have != want {
			t.Errorf("%s: want release %v, have %v", v, want, have)
		}
	}
}
