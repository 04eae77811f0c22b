// Package packaging holds no code of leasewrap: its tests check the ways
// leasewrap is installed (go install …@VERSION against a module proxy made
// from this tree); its scripts build the releases (docs/RELEASING.md).
package packaging
