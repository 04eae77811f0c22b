module github.com/leasewrap/leasewrap

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/gofrs/flock v0.13.2 // indirect
	github.com/lmittmann/tint v1.2.1 // indirect
	github.com/oklog/run v1.2.0 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
