package main

import (
	"log/slog"
	"os"
	"path/filepath"
)

// warnRelative warns that the environment variable name, set to a relative
// path, is resolved against the working directory, so that processes
// started elsewhere use another what. Empty and absolute values are quiet.
func warnRelative(logger *slog.Logger, name, value, what string, attrs ...any) {
	if value == "" || filepath.IsAbs(value) {
		return
	}
	wd, _ := os.Getwd()
	logger.Warn(name+" is relative and resolved against the working directory; processes started elsewhere use another "+what+": set an absolute path",
		append([]any{name, value, "dir", wd}, attrs...)...)
}
