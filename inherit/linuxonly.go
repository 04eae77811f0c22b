package inherit

// The import fails the build on other OSes (see internal/linuxonly).
import _ "github.com/leasewrap/leasewrap/internal/linuxonly"
