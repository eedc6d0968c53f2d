package sandbox_test

import (
	"fmt"
	"strings"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// The hostile programs of the suite, shared by the tests that run them one at
// a time (hostile_test.go), the honest-under-attack test (pool_test.go) and the
// soak test (soak_linux_test.go).

// forkBomb counts the forks that succeed, then leaves children sleeping and
// forks forever.
const forkBomb = `import os, time
n, err = 0, None
for i in range(1000):
    try:
        pid = os.fork()
    except OSError as e:
        err = e
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print(n, type(err).__name__, flush=True)
while True:
    try:
        os.fork()
    except OSError:
        pass
`

// infiniteLoop spins until a limit kills it.
const infiniteLoop = "while True:\n    pass\n"

// sleepy prints a line, then sleeps far past any timeout.
const sleepy = "import time\nprint('before', flush=True)\ntime.sleep(100)\nprint('after')\n"

// busyThreads starts threads that wait until no more can be started, then
// lets them all spin.
const busyThreads = `import threading
go = threading.Event()
def spin():
    go.wait()
    while True:
        pass
threading.stack_size(256 << 10)
n = 0
try:
    for i in range(1000):
        threading.Thread(target=spin, daemon=True).start()
        n += 1
except RuntimeError as e:
    print(n, "RuntimeError", flush=True)
go.set()
threading.Event().wait()
`

// endlessOutput prints without end.
const endlessOutput = "while True:\n    print('y' * 1000)\n"

// attacks end by a CPU or memory limit, or at once.
var attacks = []string{
	"import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
	"x = [0] * (1 << 40)\n",
	"l = []\nwhile True:\n    l.append(bytearray(1 << 20))\n",
	"while True:\n    pass\n",
	"import threading\ndef f():\n    while True: pass\nfor i in range(100):\n    threading.Thread(target=f).start()\n",
	"import os\nos.kill(-1, 9)\n",
	"import subprocess\nsubprocess.Popen(['sleep', '300'], start_new_session=True)\n",
}

// memoryBomb allocates a quarter of mem, tries twice mem (printing
// "MemoryError" when refused), then asks for mem at once, which ends the
// program with a MemoryError and exit status 1.
func memoryBomb(mem int64) string {
	return fmt.Sprintf(`a = bytearray(%d)
print("quarter ok")
try:
    b = bytearray(%d)
    print("double ok")
except MemoryError:
    print("MemoryError")
everything = [0] * %d
`, mem/4, 2*mem, mem)
}

// hugeOutput prints the numbers below lines, one a line, then a million Es on
// stderr; it returns the program and the two streams it writes.
func hugeOutput(lines int) (code, stdout, stderr string) {
	var full strings.Builder
	for i := range lines {
		fmt.Fprintf(&full, "%d\n", i)
	}
	code = fmt.Sprintf("import sys\nfor i in range(%d):\n    print(i)\nsys.stderr.write(\"E\" * 1000000)\n", lines)
	return code, full.String(), strings.Repeat("E", 1000000)
}

// headAndTail is what the sandbox keeps of a stream s longer than maxOutput
// bytes: its first and last halves around a marker line (output.go's format).
func headAndTail(s string, maxOutput int) string {
	head, tail := maxOutput/2, maxOutput-maxOutput/2
	return s[:head] + fmt.Sprintf("\n[... %d bytes cut ...]\n", len(s)-maxOutput) + s[len(s)-tail:]
}

// filesAndDisk writes a file twice cfg.FileSize, opens files without end,
// then writes files of half cfg.FileSize until four times cfg.Disk, printing
// one line for each: the errno that stopped it, or that nothing did.
func filesAndDisk(cfg sandbox.Config) string {
	return fmt.Sprintf(`import os
try:
    with open("big", "wb") as f:
        f.write(b"x" * %d)
    print("big ok")
except OSError as e:
    print("big", e.errno)
files = []
try:
    for i in range(1000):
        files.append(open("/dev/null"))
except OSError as e:
    print("open", len(files) < %d, e.errno)
for f in files:
    f.close()
try:
    for i in range(%d):
        with open("part%%d" %% i, "wb") as f:
            f.write(b"x" * %d)
    print("disk unbounded")
except OSError as e:
    print("disk", e.errno)
`, 2*cfg.FileSize, cfg.OpenFiles, 4*cfg.Disk/cfg.FileSize, cfg.FileSize/2)
}

// backgroundProcesses starts four sleeps carrying marker that try to outlive
// the program: a plain child, two in sessions of their own (one with its
// output closed) and a daemon's double fork; then it prints "started" and exits.
func backgroundProcesses(marker string) string {
	return fmt.Sprintf(`import os, subprocess
m = %q
subprocess.Popen(["sleep", m])
subprocess.Popen(["sleep", m], start_new_session=True)
subprocess.Popen(["sleep", m], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", m])
    os._exit(0)
print("started")
`, marker)
}
