// Package metrics keeps what a run did and renders it in the Prometheus
// text exposition format (version 0.0.4): the textfile a run leaves for
// node_exporter's textfile collector (--metrics-file, see Textfile) and
// the live state a --listen endpoint serves while the run lasts (Live,
// Server).
//
// It is a leaf: it imports nothing of leasewrap and nothing outside the
// standard library. Neither prometheus/client_golang nor net/http's server
// is linked: every cron fire of the local kinds would pay their start-up
// (bench/LOG.md, "metrics"). The format is small and written here
// (Family.Write), and the tests parse every output with
// prometheus/common/expfmt, the parser Prometheus and node_exporter use, so
// the two cannot drift apart. The endpoint is a small read-only HTTP/1.1
// server on package net (Server).
//
// Textfile is the pure part of a --metrics-file update (the previous
// content in, the new content out); the caller serializes updates of a
// file among processes (cli takes a flock on its directory) and decides
// whether the previous file is leasewrap's own to carry over.
package metrics
