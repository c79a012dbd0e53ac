package rooflineimport

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/perfdag/perfdag/steps/analysis/roofline"
)

// DigestBundle hashes every regular file of a bundle directory — its relative name, size and
// content, in lexical order — so an edit anywhere in the bundle changes the import's
// fingerprint. It reads through an os.Root, so a symlink pointing outside the bundle is never
// followed (it is recorded by name only). A bundle that cannot be read yields a digest naming
// the problem: the node re-runs and its import reports the error properly.
func DigestBundle(dir string) string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer root.Close()
	h := sha256.New()
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, lerr := root.Readlink(name)
			fmt.Fprintf(h, "symlink %s -> %s %v\n", name, target, lerr)
			if lerr != nil || filepath.IsAbs(target) {
				return nil
			}
			// A link that stays inside the bundle is hashed like a file; one that leaves it
			// fails to open through the root and is left at its name.
			if f, oerr := root.Open(name); oerr == nil {
				defer f.Close()
				return hashFile(h, name, f)
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		f, err := root.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		return hashFile(h, name, f)
	})
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// DigestFile hashes one file (the model config): size and content.
func DigestFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if err := hashFile(h, filepath.Base(path), f); err != nil {
		return "unreadable: " + err.Error()
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// hashFile adds one file's name, size and content to h. A file past the import's read limit
// is hashed by name, size and modification time only: the import refuses it anyway, and the
// fingerprint must not read gigabytes to say so.
func hashFile(h io.Writer, name string, f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return nil
	}
	fmt.Fprintf(h, "file %s %d\n", filepath.ToSlash(name), st.Size())
	if st.Size() > roofline.MaxBundleFileBytes {
		fmt.Fprintf(h, "too large, modified %d\n", st.ModTime().UnixNano())
		return nil
	}
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}
