// The benchmarks (make bench): a module of their own, so that the product
// module carries none of them. Never published: it builds against this tree.
module github.com/leasewrap/leasewrap/bench

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/leasewrap/leasewrap v0.0.0-00010101000000-000000000000
	golang.org/x/sys v0.50.0
)

require (
	github.com/gofrs/flock v0.13.2 // indirect
	github.com/oklog/run v1.2.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)

replace github.com/leasewrap/leasewrap => ../
