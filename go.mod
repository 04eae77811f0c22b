module github.com/leasewrap/leasewrap

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/gofrs/flock v0.13.2
	github.com/lmittmann/tint v1.2.1
	github.com/oklog/run v1.2.0
	github.com/rogpeppe/go-internal v1.16.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.50.0
)

require golang.org/x/tools v0.26.0 // indirect
