//! What baton's files do differently on Unix and on Windows, and nowhere else: private
//! permissions, which file a path names, writing at an offset, opening without
//! blocking, the kinds of file that are not regular, and syncing a directory. Every function
//! here has one body per platform; the rest of baton is the same everywhere.
//!
//! - Private files: on Unix baton's files are created 0600 and its directories 0700. On
//!   Windows they get the default ACL of where they are made, and baton's home is under the
//!   user's profile (`%APPDATA%`), which only that user (and administrators) can open.
//! - Which file a path names ([`file_id`]): the inode number on Unix, the file index on
//!   Windows (which std has only as an unstable API, so it is asked of Windows here).
//!   Either is kept by a rename and by an append, and differs for a file made anew.
//! - Replacing a file that is open ([`rename_replacing`]):
//!   on Unix a rename over a file others hold open is always allowed, and they go on
//!   reading the old bytes. Windows allows it only where the rename gets POSIX semantics
//!   (NTFS on Windows 10 and later, to a reader that opened with FILE_SHARE_DELETE, as std
//!   does); with the classic semantics (FAT, many network shares, Wine) it is refused with
//!   "Access denied" for as long as any handle is open. So no file that is replaced is kept
//!   open past reading it (a board is read whole into memory), and on Windows a rename that
//!   meets another process's reader in the middle of its read is tried again.

use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Open options that create files readable by their owner only (0600 on Unix; see the
/// module's comment for Windows).
pub fn private_open_options() -> OpenOptions {
    open_options_with_mode(0o600)
}

/// Creates `dir` and its missing parents, private to their owner (0700 on Unix).
pub fn create_private_dirs(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// The permission bits of a file (`0o7777` at most); `None` where the system has none
/// (Windows, whose ACLs are not bits).
pub fn mode(metadata: &Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(metadata.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// Open options that create a file with permission bits `mode` where the system has them.
pub fn open_options_with_mode(mode: u32) -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = (&mut options, mode);
    options
}

/// Sets the permission bits of `file` to `mode` where the system has them.
pub fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// Which file, among the files of its filesystem, is the one at `path`, whose `metadata`
/// the caller has read: see the module's comment. On Windows, should the file not open
/// (gone since), its last-write time stands in.
pub fn file_id(path: &Path, metadata: &Metadata) -> u64 {
    #[cfg(unix)]
    {
        let _ = path;
        std::os::unix::fs::MetadataExt::ino(metadata)
    }
    #[cfg(windows)]
    {
        windows_file_index(path)
            .unwrap_or_else(|| std::os::windows::fs::MetadataExt::last_write_time(metadata))
    }
}

/// The file index of the file at `path`, as GetFileInformationByHandle gives it.
#[cfg(windows)]
fn windows_file_index(path: &Path) -> Option<u64> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    // std opens with every sharing mode, so this holds up no rename or delete meanwhile.
    let file = File::open(path).ok()?;
    // SAFETY: a plain C struct of integers, for which all zeroes is a value.
    let mut information: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle stays open for the call (`file` lives to the end of the function),
    // and `information` is the writable struct of the type the call fills.
    let done = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut information) };
    (done != 0).then(|| {
        (u64::from(information.nFileIndexHigh) << 32) | u64::from(information.nFileIndexLow)
    })
}

/// Renames `from` over `to`. On Windows a refusal ("Access denied", or a sharing
/// violation) while someone holds `to` open is tried again for a while: readers hold a
/// file that is replaced only while they read it (see the module's comment).
pub fn rename_replacing(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::rename(from, to)
    }
    #[cfg(windows)]
    {
        use std::time::{Duration, Instant};
        // ERROR_ACCESS_DENIED and ERROR_SHARING_VIOLATION.
        const HELD_OPEN: [i32; 2] = [5, 32];
        let give_up = Instant::now() + Duration::from_secs(2);
        let mut pause = Duration::from_millis(1);
        loop {
            match std::fs::rename(from, to) {
                Err(error)
                    if error
                        .raw_os_error()
                        .is_some_and(|code| HELD_OPEN.contains(&code))
                        && Instant::now() < give_up =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                done => return done,
            }
        }
    }
}

/// The absolute path of `path` with every symlink resolved, spelled as people write it. On
/// Windows std gives the verbatim form (`\\?\C:\src\api`), which baton would then store
/// and show: it is given back without its prefix wherever the plain form names the same
/// file ([`plain_windows_path`]).
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    if cfg!(windows)
        && let Some(plain) = canonical.to_str().and_then(plain_windows_path)
    {
        return Ok(PathBuf::from(plain));
    }
    Ok(canonical)
}

/// The plain spelling of a verbatim Windows path (`\\?\C:\…` → `C:\…`,
/// `\\?\UNC\server\share\…` → `\\server\share\…`), when Windows reads the plain one as
/// the same path: under 260 characters, and no component that the plain form would change
/// (a device name such as `NUL` or `com1.txt`, or one ending in a dot or a space). `None`
/// for any other path.
pub fn plain_windows_path(verbatim: &str) -> Option<String> {
    let plain = if let Some(rest) = verbatim.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{rest}")
    } else {
        let rest = verbatim.strip_prefix(r"\\?\")?;
        let bytes = rest.as_bytes();
        let is_drive = bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && bytes[2] == b'\\';
        if !is_drive {
            return None;
        }
        rest.to_string()
    };
    const DEVICES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
    let is_device = |name: &str| {
        let stem = name.split('.').next().unwrap_or(name).trim_end();
        let numbered = |prefix: &str| {
            stem.len() == 4
                && stem
                    .get(..3)
                    .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
                && stem.as_bytes()[3].is_ascii_digit()
        };
        DEVICES
            .iter()
            .any(|device| stem.eq_ignore_ascii_case(device))
            || numbered("COM")
            || numbered("LPT")
    };
    let components_keep = plain
        .split('\\')
        .filter(|name| !name.is_empty())
        .skip(1)
        .all(|name| !name.ends_with(['.', ' ']) && !is_device(name));
    (plain.chars().count() < 260 && components_keep).then_some(plain)
}

/// The device and inode of `metadata` on Unix, as `/proc/locks` names a file.
#[cfg(unix)]
pub fn device_and_inode(metadata: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

/// Writes all of `bytes` into `file` at `offset` (on Windows, moving its cursor).
pub fn write_all_at(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        #[cfg(unix)]
        let written = std::os::unix::fs::FileExt::write_at(file, bytes, offset);
        #[cfg(windows)]
        let written = std::os::windows::fs::FileExt::seek_write(file, bytes, offset);
        match written {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(wrote) => {
                bytes = &bytes[wrote..];
                offset += wrote as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// `options` made to open without waiting: on Unix O_NONBLOCK, so that open(2) of a FIFO
/// returns at once (a regular file is unchanged by it). Windows has no FIFOs at a path.
pub fn never_block(options: &OpenOptions) -> OpenOptions {
    let mut options = options.clone();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, nix::libc::O_NONBLOCK);
    #[cfg(not(unix))]
    let _ = &mut options;
    options
}

/// As [`never_block`], and refusing to open a symbolic link: on Unix O_NONBLOCK and
/// O_NOFOLLOW (set together: each setting of the custom flags replaces the one before).
/// Windows has links of its own, which a store's files do not meet: unchanged there.
pub fn never_block_nor_follow(options: &OpenOptions) -> OpenOptions {
    let mut options = options.clone();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW,
    );
    #[cfg(not(unix))]
    let _ = &mut options;
    options
}

/// What a file of `file_type` is when it is neither a regular file nor a directory, where
/// the system has such files (FIFOs, sockets, devices on Unix).
pub fn special_kind(file_type: FileType) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            Some("a FIFO")
        } else if file_type.is_socket() {
            Some("a socket")
        } else if file_type.is_block_device() {
            Some("a block device")
        } else if file_type.is_char_device() {
            Some("a character device")
        } else {
            None
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file_type;
        None
    }
}

/// Whether `dir` is on a filesystem that other machines may write to (NFS, SMB, AFS, Ceph,
/// 9p, FUSE such as sshfs; a mapped network drive or a UNC path on Windows). The kernel
/// tells of changes made through this machine only, so file events there could miss a
/// change and `watch` looks at the files instead. False where it cannot tell.
pub fn is_network_filesystem(dir: &Path) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // The magic numbers of statfs(2) (linux/magic.h, and the filesystems' own headers).
        const NETWORK: [u32; 15] = [
            0x6969,      // NFS
            0x517B,      // SMB
            0xFF53_4D42, // CIFS
            0xFE53_4D42, // SMB2
            0x564C,      // NCP
            0x7375_7245, // Coda
            0x5346_414F, // AFS
            0x6B41_4653, // kAFS
            0x00C3_6400, // Ceph
            0x0102_1997, // 9p (v9fs, WSL's Windows drives)
            0x6573_5546, // FUSE (sshfs, rclone, virtiofs' shares...)
            0x0BD0_0BD0, // Lustre
            0x0116_1970, // GFS2
            0x7461_636F, // OCFS2
            0x4750_4653, // GPFS
        ];
        // The type is a C long or int by platform; every magic number fits in 32 bits.
        nix::sys::statfs::statfs(dir)
            .is_ok_and(|stat| NETWORK.contains(&(stat.filesystem_type().0 as u32)))
    }
    #[cfg(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "openbsd"
    ))]
    {
        const NETWORK: [&str; 7] = ["nfs", "smbfs", "afpfs", "webdav", "cifs", "ftp", "macfuse"];
        nix::sys::statfs::statfs(dir)
            .is_ok_and(|stat| NETWORK.contains(&stat.filesystem_type_name()))
    }
    #[cfg(windows)]
    {
        use std::os::windows::ffi::OsStrExt;
        use std::path::{Component, Prefix};
        use windows_sys::Win32::Storage::FileSystem::GetDriveTypeW;
        // DRIVE_REMOTE (windows-sys has it behind a feature baton does not otherwise need).
        const DRIVE_REMOTE: u32 = 4;
        let Some(Component::Prefix(prefix)) = dir.components().next() else {
            return false;
        };
        match prefix.kind() {
            Prefix::UNC(..) | Prefix::VerbatimUNC(..) => true,
            Prefix::Disk(letter) | Prefix::VerbatimDisk(letter) => {
                let root: Vec<u16> = std::ffi::OsStr::new(&format!("{}:\\", letter as char))
                    .encode_wide()
                    .chain([0])
                    .collect();
                // SAFETY: `root` is a NUL-terminated wide string that outlives the call.
                unsafe { GetDriveTypeW(root.as_ptr()) == DRIVE_REMOTE }
            }
            _ => false,
        }
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "openbsd",
        windows
    )))]
    {
        let _ = dir;
        false
    }
}

/// Makes a rename in `dir` durable. Unix syncs the directory; on Windows a directory cannot
/// be opened as a file to sync, and a rename's durability is left to NTFS's own journal.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir).and_then(|handle| handle.sync_all())
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verbatim_windows_path_is_spelled_plainly_where_that_names_the_same_file() {
        let plain = |path: &str| plain_windows_path(path);
        assert_eq!(plain(r"\\?\C:\src\api").as_deref(), Some(r"C:\src\api"));
        assert_eq!(
            plain(r"\\?\UNC\server\share\api").as_deref(),
            Some(r"\\server\share\api")
        );
        // Plain spellings Windows would read otherwise stay verbatim.
        for kept in [
            r"\\?\C:\src\nul",
            r"\\?\C:\src\COM1.txt",
            r"\\?\C:\src\lpt9",
            r"\\?\C:\src\api.",
            r"\\?\C:\src\api ",
            r"\\?\Volume{0b1e}\src",
            r"\\?\GLOBALROOT\Device\x",
        ] {
            assert_eq!(plain(kept), None, "{kept}");
        }
        let long = format!(r"\\?\C:\{}", "a".repeat(260));
        assert_eq!(plain(&long), None, "too long for the plain form");
        // Names that only look like devices, and characters of any width.
        assert_eq!(
            plain(r"\\?\C:\console\com10\😀\lpt").as_deref(),
            Some(r"C:\console\com10\😀\lpt")
        );
        // Not verbatim: nothing to do.
        assert_eq!(plain(r"C:\src"), None);
        assert_eq!(plain("/home/ann"), None);
    }
}
