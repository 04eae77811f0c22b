// Package linuxonly stops a build for another operating system with one
// clear message: every Linux-only package imports it, so a build elsewhere
// fails here once, not with a page of undefined names.
package linuxonly
