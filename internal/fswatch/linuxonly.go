package fswatch

// leasewrap is Linux-only: on another OS this import fails the build with
// one message saying so (see internal/linuxonly).
import _ "github.com/leasewrap/leasewrap/internal/linuxonly"
