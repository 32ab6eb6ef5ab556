//! Where received files land: names are checked, data goes to a temporary file in the output
//! directory, and only a verified file is renamed to its announced name.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The longest file name a file system takes (`NAME_MAX` on Linux and the BSDs), bytes.
const NAME_MAX: usize = 255;
/// What the temporary name `.NAME.rmcast-<16 hex>.part` adds to a name, bytes.
const TEMP_EXTRA: usize = ".".len() + ".rmcast-".len() + 16 + ".part".len();
/// The longest name rmcast sends or receives, bytes of UTF-8: the receiver first writes
/// under a temporary name 30 bytes longer, which must fit in 255.
pub const MAX_NAME: usize = NAME_MAX - TEMP_EXTRA;

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("empty name")]
    /// The name is empty.
    Empty,
    #[error("{0} bytes long; names are at most {MAX_NAME} bytes (the receiver's temporary name adds {TEMP_EXTRA} to the {NAME_MAX} a file system allows)")]
    /// The name is longer than [`MAX_NAME`] bytes (its length).
    TooLong(usize),
    #[error("absolute path")]
    /// The name is an absolute path.
    Absolute,
    #[error("contains `..`, `.`, a path separator or a control character")]
    /// The name would leave the output directory or is not printable.
    Traversal,
    #[error("the target is a symbolic link")]
    /// The target is a symbolic link.
    Symlink,
    #[error("the target exists (use --force to overwrite)")]
    /// The target exists and overwriting was not allowed.
    Exists,
    #[error("the target is not a regular file")]
    /// The target is not a regular file.
    NotAFile,
}

/// Check an announced name: a single, plain path component.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME {
        return Err(NameError::TooLong(name.len()));
    }
    if name.starts_with('/') || name.starts_with('\\') || Path::new(name).is_absolute() {
        return Err(NameError::Absolute);
    }
    if name == "."
        || name == ".."
        || name.contains('/')
        || name.contains('\\')
        || name.chars().any(|c| c.is_control())
    {
        return Err(NameError::Traversal);
    }
    Ok(())
}

/// Check that `dir/name` may be (over)written.
pub fn check_target(dir: &Path, name: &str, force: bool) -> Result<PathBuf, NameError> {
    check_name(name)?;
    let target = dir.join(name);
    match fs::symlink_metadata(&target) {
        Ok(m) if m.file_type().is_symlink() => Err(NameError::Symlink),
        Ok(m) if !m.is_file() => Err(NameError::NotAFile),
        Ok(_) if !force => Err(NameError::Exists),
        _ => Ok(target),
    }
}

/// A file being received: a temporary name in the output directory, removed on drop unless
/// [`Incoming::commit`] renamed it — or, for a file that can be resumed
/// ([`Incoming::resumable`]), kept with its sidecar for the next session unless
/// [`Incoming::discard`]ed.
#[derive(Debug)]
pub struct Incoming {
    tmp: PathBuf,
    /// The resume sidecar, kept with `tmp` on drop (`None`: `tmp` is removed on drop).
    meta: Option<PathBuf>,
    target: PathBuf,
    file: Option<File>,
    force: bool,
    name: String,
    /// Bytes written, and of those handed to the disk's write-back so far.
    written: u64,
    flushing: u64,
}

/// Written bytes that start the disk's write-back of a growing file.
const WRITEBACK_EVERY: u64 = 8 << 20;

impl Incoming {
    /// Start receiving `name` into `dir` (overwriting only with `force`), under a temporary name
    /// unique to `tag`.
    pub fn create(dir: &Path, name: &str, force: bool, tag: u64) -> std::io::Result<Self> {
        let target = check_target(dir, name, force)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let tmp = dir.join(format!(".{name}.rmcast-{tag:016x}.part"));
        let file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        Ok(Incoming {
            tmp,
            meta: None,
            target,
            file: Some(file),
            force,
            name: name.to_string(),
            written: 0,
            flushing: 0,
        })
    }

    /// Start receiving the file `s` into `dir` at byte `from` (restart mode, see
    /// [`crate::resume`]): under its `.part` name beside its sidecar. From 0 the part is
    /// created or emptied; from `from` > 0 it must hold at least that much under a sidecar
    /// naming this very file, and its first `from` bytes are handed to `prefix` (to hash)
    /// before it is cut there. Returns the file and the bytes already held.
    pub fn resumable(
        dir: &Path,
        s: &crate::resume::Sidecar,
        force: bool,
        from: u64,
        prefix: &mut dyn FnMut(&[u8]),
    ) -> std::io::Result<Self> {
        use std::io::{Read, Seek, SeekFrom};
        let target = check_target(dir, &s.name, force)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let (tmp, meta) = crate::resume::paths(dir, &s.name, &s.digest);
        // A link or anything but a plain file under the part's name is not followed.
        if fs::symlink_metadata(&tmp).is_ok_and(|m| !m.is_file()) {
            return Err(std::io::Error::other(
                "the partial file is not a regular file",
            ));
        }
        let mut file = if from == 0 {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)?;
            fs::write(&meta, s.encode())?;
            f
        } else {
            if crate::resume::read_sidecar(dir, &meta).as_ref() != Some(s) {
                return Err(std::io::Error::other(format!(
                    "the sender resumes at byte {from}, and no partial copy of this file is here"
                )));
            }
            let f = OpenOptions::new().read(true).write(true).open(&tmp)?;
            let held = f.metadata()?.len();
            if held < from {
                return Err(std::io::Error::other(format!(
                    "the sender resumes at byte {from}; the partial copy here holds {held}"
                )));
            }
            f
        };
        file.set_len(from)?;
        let mut buf = vec![0u8; 1 << 20];
        let mut left = from;
        while left > 0 {
            let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
            let chunk = buf.get_mut(..want).unwrap_or_default();
            file.read_exact(chunk)?;
            prefix(chunk);
            left -= want as u64;
        }
        file.seek(SeekFrom::Start(from))?;
        Ok(Incoming {
            tmp,
            meta: Some(meta),
            target,
            file: Some(file),
            force,
            name: s.name.clone(),
            written: from,
            flushing: from,
        })
    }

    /// Give the file up for good: its partial data and sidecar are removed (a digest
    /// mismatch, malformed data).
    pub fn discard(mut self) {
        if let Some(m) = self.meta.take() {
            let _ = fs::remove_file(m);
        }
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Append `data`.
    pub fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        let Some(f) = self.file.as_mut() else {
            return Err(std::io::Error::other("file already closed"));
        };
        f.write_all(data)?;
        self.written += data.len() as u64;
        if self.written - self.flushing >= WRITEBACK_EVERY {
            crate::socket::start_writeback(f, self.flushing, self.written - self.flushing);
            self.flushing = self.written;
        }
        Ok(())
    }

    /// Flush and rename to the target name; re-checks the target first (it may have appeared
    /// or become a link while we received).
    pub fn commit(mut self) -> Result<PathBuf, String> {
        if let Some(f) = self.file.take() {
            f.sync_all().map_err(|e| format!("flush: {e}"))?;
        }
        let dir = self.target.parent().unwrap_or(Path::new("."));
        check_target(dir, &self.name, self.force).map_err(|e| e.to_string())?;
        fs::rename(&self.tmp, &self.target).map_err(|e| format!("rename: {e}"))?;
        self.tmp = PathBuf::new();
        if let Some(m) = self.meta.take() {
            let _ = fs::remove_file(m);
        }
        Ok(self.target.clone())
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        self.file.take();
        // A resumable file's partial data stays with its sidecar for the next session.
        if !self.tmp.as_os_str().is_empty() && self.meta.is_none() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_name_fits_with_its_temporary_name_and_one_more_byte_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let longest = "n".repeat(MAX_NAME);
        assert_eq!(MAX_NAME, 225);
        // The temporary file of the longest name can be created and committed.
        let mut f = Incoming::create(dir.path(), &longest, false, u64::MAX).unwrap();
        f.write(b"x").unwrap();
        assert_eq!(f.commit().unwrap(), dir.path().join(&longest));
        let longer = "n".repeat(MAX_NAME + 1);
        assert_eq!(check_name(&longer), Err(NameError::TooLong(MAX_NAME + 1)));
        // Bytes count, not characters: 113 two-byte characters are 226 bytes.
        assert_eq!(check_name(&"é".repeat(113)), Err(NameError::TooLong(226)));
        assert!(check_name(&"é".repeat(112)).is_ok());
    }

    #[test]
    fn names_outside_the_directory_are_refused() {
        for bad in ["", "/etc/passwd", "..", ".", "../x", "a/b", "a\\b", "x\ny"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["a.bin", "..hidden", "report 2026.pdf", "ünï"] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn exists_symlink_and_commit() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("old"), b"x").unwrap();
        assert_eq!(check_target(d.path(), "old", false), Err(NameError::Exists));
        assert!(check_target(d.path(), "old", true).is_ok());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", d.path().join("link")).unwrap();
            assert_eq!(
                check_target(d.path(), "link", true),
                Err(NameError::Symlink)
            );
        }
        let mut i = Incoming::create(d.path(), "new", false, 1).unwrap();
        i.write(b"hello").unwrap();
        let p = i.commit().unwrap();
        assert_eq!(fs::read(p).unwrap(), b"hello");
        // dropped without commit: no trace left
        let mut j = Incoming::create(d.path(), "partial", false, 2).unwrap();
        j.write(b"half").unwrap();
        drop(j);
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(!names.iter().any(|n| n.contains("partial")), "{names:?}");
    }
}
