// gofake: a Go program for the seccomp tests (tests/integ/t-seccomp-go.sh).
// Go's runtime makes its system calls itself, with or without cgo, so a
// preload never sees them: what it prints in a session is what the
// seccomp filter answered.  Standard library only, so that the test
// builds it with Debian's golang-go and nothing else.
//
//	gofake ids                     "uid euid gid egid groups"
//	gofake chown|lchown PATH U G   "ok"
//	gofake lstat|stat PATH         "uid gid mode major minor" (mode in octal)
//	gofake mknod PATH c|b MODE MAJ MIN   "ok"
//	gofake tar DIR                 an archive/tar of DIR on stdout
//	gofake threads N PATH U G      N goroutines, each on its own OS thread,
//	                               chown and lstat PATH 200 times: "ok"
//
// Errors print "ERR <errno name>" (or the error) and exit 1.
package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

var names = map[syscall.Errno]string{
	syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT", syscall.EACCES: "EACCES",
	syscall.EEXIST: "EEXIST", syscall.EINVAL: "EINVAL", syscall.ENOSYS: "ENOSYS",
}

func fail(err error) {
	var e syscall.Errno
	if errors.As(err, &e) {
		if n, ok := names[e]; ok {
			fmt.Println("ERR", n)
		} else {
			fmt.Println("ERR", int(e))
		}
	} else {
		fmt.Println("ERR", err)
	}
	os.Exit(1)
}

func num(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad number:", s)
		os.Exit(2)
	}
	return n
}

// The kernel's encoding of a dev_t, as glibc's makedev.
func mkdev(maj, min uint64) int {
	return int((maj&0xfff)<<8 | (maj&^0xfff)<<32 | min&0xff | (min&^0xff)<<12)
}

func meta(fi os.FileInfo) string {
	st := fi.Sys().(*syscall.Stat_t)
	maj := (st.Rdev>>8)&0xfff | (st.Rdev>>32)&^0xfff
	min := st.Rdev&0xff | (st.Rdev>>12)&^0xff
	return fmt.Sprintf("%d %d %o %d %d", st.Uid, st.Gid, st.Mode, maj, min)
}

func writeTar(dir string) error {
	tw := tar.NewWriter(os.Stdout)
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&os.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = p
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func threads(n int, path string, u, g int) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			for k := 0; k < 200; k++ {
				if err := os.Lchown(path, u, g); err != nil {
					errs <- err
					return
				}
				fi, err := os.Lstat(path)
				if err != nil {
					errs <- err
					return
				}
				st := fi.Sys().(*syscall.Stat_t)
				if int(st.Uid) != u || int(st.Gid) != g {
					errs <- fmt.Errorf("mismatch %d:%d", st.Uid, st.Gid)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func run(a []string) error {
	switch {
	case len(a) == 1 && a[0] == "ids":
		gs, err := os.Getgroups()
		if err != nil {
			return err
		}
		fmt.Println(os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid(), gs)
	case len(a) == 4 && a[0] == "chown":
		return os.Chown(a[1], num(a[2]), num(a[3]))
	case len(a) == 4 && a[0] == "lchown":
		return os.Lchown(a[1], num(a[2]), num(a[3]))
	case len(a) == 2 && (a[0] == "lstat" || a[0] == "stat"):
		f := os.Lstat
		if a[0] == "stat" {
			f = os.Stat
		}
		fi, err := f(a[1])
		if err != nil {
			return err
		}
		fmt.Println(meta(fi))
	case len(a) == 6 && a[0] == "mknod":
		m, err := strconv.ParseUint(a[3], 8, 32)
		if err != nil {
			return err
		}
		t := uint32(syscall.S_IFCHR)
		if a[2] == "b" {
			t = syscall.S_IFBLK
		}
		return syscall.Mknod(a[1], t|uint32(m),
			mkdev(uint64(num(a[4])), uint64(num(a[5]))))
	case len(a) == 2 && a[0] == "tar":
		return writeTar(a[1])
	case len(a) == 5 && a[0] == "threads":
		return threads(num(a[1]), a[2], num(a[3]), num(a[4]))
	default:
		fmt.Fprintln(os.Stderr, "usage: gofake ids|chown|lchown|lstat|stat|mknod|tar|threads ...")
		os.Exit(2)
	}
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fail(err)
	}
	a := os.Args[1:]
	if a[0] == "chown" || a[0] == "lchown" || a[0] == "mknod" || a[0] == "threads" {
		fmt.Println("ok")
	}
}
