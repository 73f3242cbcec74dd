//! Reading an option file (`--config-file`, `my.cnf`) without trusting it
//! to be one: `/dev/zero` or a huge file would otherwise be read into
//! memory whole, and a FIFO nobody writes would hang the command before it
//! says anything.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// The most an option file may hold. sysbench option files and `my.cnf`
/// are a few hundred bytes; a mebibyte is far more than any needs.
pub(crate) const OPTION_FILE_LIMIT: u64 = 1 << 20;

/// How long reading one may take: a regular file takes microseconds; only
/// a FIFO or device that never ends takes longer.
const OPTION_FILE_PATIENCE: Duration = Duration::from_secs(5);

/// Why an option file was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SmallFileError {
    #[error("cannot read it: {0}")]
    Unreadable(io::Error),
    #[error(
        "it holds more than {} bytes (1 MiB), which no option file needs: check that this names the right file",
        OPTION_FILE_LIMIT
    )]
    TooLarge,
    #[error(
        "still reading after {} s, so it never ends (a FIFO nobody writes or closes?): name a regular file",
        OPTION_FILE_PATIENCE.as_secs()
    )]
    NeverEnds,
}

/// The text of `path`, at most [`OPTION_FILE_LIMIT`] bytes, read within
/// [`OPTION_FILE_PATIENCE`]. A pipe from the shell (`<(echo threads=4)`)
/// is fine; anything slower is refused, and the thread blocked on it is
/// left behind for the process's imminent exit to end.
pub(crate) fn read_small_text(path: &Path) -> Result<String, SmallFileError> {
    let (done, result) = mpsc::channel();
    let owned: PathBuf = path.to_owned();
    let reader = std::thread::Builder::new()
        .name("wirebench-option-file".to_owned())
        .spawn(move || {
            let _ = done.send(read_capped(&owned));
        })
        .map_err(SmallFileError::Unreadable)?;
    match result.recv_timeout(OPTION_FILE_PATIENCE) {
        Ok(text) => {
            let _ = reader.join();
            text
        }
        Err(_) => Err(SmallFileError::NeverEnds),
    }
}

fn read_capped(path: &Path) -> Result<String, SmallFileError> {
    let file = std::fs::File::open(path).map_err(SmallFileError::Unreadable)?;
    let mut bytes = Vec::new();
    file.take(OPTION_FILE_LIMIT + 1).read_to_end(&mut bytes).map_err(SmallFileError::Unreadable)?;
    if bytes.len() as u64 > OPTION_FILE_LIMIT {
        return Err(SmallFileError::TooLarge);
    }
    String::from_utf8(bytes)
        .map_err(|e| SmallFileError::Unreadable(io::Error::new(io::ErrorKind::InvalidData, e.utf8_error())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_device_stops_at_the_limit() {
        assert!(matches!(read_small_text(Path::new("/dev/zero")), Err(SmallFileError::TooLarge)));
    }

    #[test]
    fn the_limit_itself_is_allowed() {
        let path = std::env::temp_dir().join(format!("wirebench-small-file-{}", std::process::id()));
        std::fs::write(&path, vec![b'#'; OPTION_FILE_LIMIT as usize]).unwrap();
        let exact = read_small_text(&path).map(|text| text.len());
        std::fs::write(&path, vec![b'#'; OPTION_FILE_LIMIT as usize + 1]).unwrap();
        let over = read_small_text(&path);
        let _ = std::fs::remove_file(&path);
        assert_eq!(exact.unwrap(), OPTION_FILE_LIMIT as usize);
        assert!(matches!(over, Err(SmallFileError::TooLarge)));
    }
}
