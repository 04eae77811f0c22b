// Package linuxonly stops a build for another operating system with one
// clear message. leasewrap needs Linux (pidfd, PR_SET_CHILD_SUBREAPER, cgroup v2,
// /proc, inotify, flock semantics); every package that cannot build
// elsewhere imports this one, so `GOOS=darwin go build ./...` fails here,
// once, instead of with a page of undefined names.
package linuxonly
