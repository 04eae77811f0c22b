package supervisor

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"
)

// tracedPdeathsig: on amd64 a traced child is started with Pdeathsig, and
// clearPdeathsig undoes it before the child is let go (see startTraced).
const tracedPdeathsig = true

// clearPdeathsig makes the stopped tracee pid run prctl(PR_SET_PDEATHSIG,
// 0) before its first instruction: the instruction at its program counter
// is replaced by a syscall for one single step, then the code and the
// registers are put back exactly. It must be called while pid is in a
// ptrace stop (at its exec), from the tracer's thread.
func clearPdeathsig(pid int) error {
	var saved unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &saved); err != nil {
		return fmt.Errorf("get registers: %w", err)
	}
	code := make([]byte, 8)
	if _, err := unix.PtracePeekText(pid, uintptr(saved.Rip), code); err != nil {
		return fmt.Errorf("read code: %w", err)
	}
	patched := append([]byte(nil), code...)
	patched[0], patched[1] = 0x0f, 0x05 // syscall
	if _, err := unix.PtracePokeText(pid, uintptr(saved.Rip), patched); err != nil {
		return fmt.Errorf("write code: %w", err)
	}
	restore := func() error {
		if _, err := unix.PtracePokeText(pid, uintptr(saved.Rip), code); err != nil {
			return fmt.Errorf("restore code: %w", err)
		}
		if err := unix.PtraceSetRegs(pid, &saved); err != nil {
			return fmt.Errorf("restore registers: %w", err)
		}
		return nil
	}
	regs := saved
	regs.Orig_rax = ^uint64(0) // no syscall to restart
	regs.Rax = unix.SYS_PRCTL
	regs.Rdi = unix.PR_SET_PDEATHSIG
	regs.Rsi = 0
	if err := unix.PtraceSetRegs(pid, &regs); err != nil {
		restore()
		return fmt.Errorf("set registers: %w", err)
	}
	if err := unix.PtraceSingleStep(pid); err != nil {
		restore()
		return fmt.Errorf("single-step: %w", err)
	}
	var ws unix.WaitStatus
	if _, err := eintr.Retry2(func() (int, error) { return unix.Wait4(pid, &ws, unix.WALL, nil) }); err != nil {
		return fmt.Errorf("wait for the step: %w", err)
	}
	if !ws.Stopped() || ws.StopSignal() != unix.SIGTRAP {
		return fmt.Errorf("step ended with status %#x", uint32(ws))
	}
	var after unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &after); err != nil {
		restore()
		return fmt.Errorf("get registers after the step: %w", err)
	}
	if err := restore(); err != nil {
		return err
	}
	if int64(after.Rax) != 0 {
		return fmt.Errorf("prctl(PR_SET_PDEATHSIG, 0) returned %d", int64(after.Rax))
	}
	return nil
}
