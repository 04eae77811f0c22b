// Command empty is the start-up baseline of `make bench`: a Go program that
// does nothing, built statically like leasewrap.
package main

func main() {}
