//! Generated code for the `fsindex.v1` gRPC API, and the one rule for the
//! paths its messages carry (see [`paths`]).
//!
//! The daemon implements [`v1::index_server::Index`]; clients use
//! [`v1::index_client::IndexClient`].

/// The `fsindex.v1` package.
#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("fsindex.v1");

    /// Encoded file descriptor set, for the gRPC reflection service.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("fsindex_descriptor");
}

pub mod pgpass;
#[cfg(feature = "fleet")]
pub mod pgtls;

/// The form of the absolute paths in messages, which the daemon and its
/// clients must agree on byte for byte.
pub mod paths {
    use std::path::{Path, PathBuf};

    /// `std::fs::canonicalize`, except that on Windows a verbatim path
    /// (`\\?\C:\Users\me`) that means the same without its prefix is
    /// given without it (`C:\Users\me`), as users type and tools print
    /// them. Paths of 260 characters or more, UNC paths and names Windows
    /// would read as devices (`NUL`, `COM1`) or trim (`a.`) keep the
    /// prefix, which they need.
    pub fn canonicalize(p: impl AsRef<Path>) -> std::io::Result<PathBuf> {
        let real = std::fs::canonicalize(p)?;
        if cfg!(windows) {
            return Ok(without_verbatim(real));
        }
        Ok(real)
    }

    /// `\\?\X:\...` without `\\?\` where that means the same path.
    #[allow(unsafe_code)]
    pub fn without_verbatim(p: PathBuf) -> PathBuf {
        let b = p.as_os_str().as_encoded_bytes();
        let simple = b.len() < 260 + 4
            && b.len() >= 7
            && b.starts_with(br"\\?\")
            && b[4].is_ascii_alphabetic()
            && &b[5..7] == br":\"
            && b[7..].split(|&c| c == b'\\').all(plain_name);
        if !simple {
            return p;
        }
        // SAFETY: the bytes come from an OsStr and are cut right after
        // the ASCII `\\?\`, a boundary `from_encoded_bytes_unchecked`
        // allows.
        let rest = unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(&b[4..]) };
        PathBuf::from(rest)
    }

    /// A name that reads the same with or without the verbatim prefix.
    fn plain_name(name: &[u8]) -> bool {
        if name.is_empty() {
            return true;
        }
        if name.ends_with(b".") || name.ends_with(b" ") || name.contains(&b'/') {
            return false;
        }
        let stem = name.split(|&c| c == b'.').next().unwrap_or(name);
        let stem = stem.to_ascii_uppercase();
        let device = matches!(stem.as_slice(), b"CON" | b"PRN" | b"AUX" | b"NUL")
            || (stem.len() == 4
                && (stem.starts_with(b"COM") || stem.starts_with(b"LPT"))
                && stem[3].is_ascii_digit());
        !device
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn verbatim_prefixes_go_where_they_change_nothing() {
            let w = |s: &str| without_verbatim(PathBuf::from(s));
            assert_eq!(w(r"\\?\C:\Users\me"), PathBuf::from(r"C:\Users\me"));
            assert_eq!(w(r"\\?\C:\"), PathBuf::from(r"C:\"));
            assert_eq!(
                w(r"\\?\C:\tmp\NUL.txt"),
                PathBuf::from(r"\\?\C:\tmp\NUL.txt")
            );
            assert_eq!(w(r"\\?\C:\tmp\a."), PathBuf::from(r"\\?\C:\tmp\a."));
            assert_eq!(
                w(r"\\?\UNC\server\share"),
                PathBuf::from(r"\\?\UNC\server\share")
            );
            let long = format!(r"\\?\C:\{}", "a".repeat(300));
            assert_eq!(w(&long), PathBuf::from(&long));
            assert_eq!(w("/home/me"), PathBuf::from("/home/me"));
        }
    }
}
