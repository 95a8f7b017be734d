//go:build windows

package mcpclient

import (
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procAttr has nothing to set on Windows: the job object (see newTree)
// holds the server's tree.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// tree is a stdio server's job object: every process it starts joins the
// job, the job is terminated as a whole, and because it is created with
// kill-on-close, the server dies with acpgate even if acpgate is killed.
// Safe for concurrent use.
type tree struct {
	mu  sync.Mutex
	job windows.Handle // 0 if the job could not be set up
}

func newTree(p *os.Process, _ string) *tree {
	t := &tree{}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return t
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return t
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return t
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return t
	}
	t.job = job
	return t
}

// signal terminates the job when kill is set. Windows has no SIGTERM for
// console processes without a console of their own: closing stdin was the
// polite request.
func (t *tree) signal(kill bool) {
	if !kill {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job != 0 {
		_ = windows.TerminateJobObject(t.job, 1)
	}
}

// alive reports whether the leader or any process of the job still runs.
func (t *tree) alive(leader <-chan struct{}) bool {
	select {
	case <-leader:
	default:
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job == 0 {
		return false
	}
	var info jobAccounting
	if err := windows.QueryInformationJobObject(t.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return false
	}
	return info.ActiveProcesses > 0
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                     int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses                uint32
	ActiveProcesses, TotalTerminatedProcesses          uint32
}

// release closes the job handle; kill-on-close ends what is left.
func (t *tree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job != 0 {
		_ = windows.CloseHandle(t.job)
		t.job = 0
	}
}
