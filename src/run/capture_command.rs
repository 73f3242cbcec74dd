//! `wirebench capture import|info`: the capture layer's work, printed.

use super::output::{stderr_line, Output, OutputError};
use crate::capture::{self, CaptureCommand, CaptureCommandError, InfoFormat};

/// Why a capture command ended in failure.
#[derive(Debug, thiserror::Error)]
pub enum CaptureRunError {
    #[error(transparent)]
    Capture(#[from] CaptureCommandError),
    /// Its report could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Runs a capture command; its report on standard output.
pub fn capture_command(command: &CaptureCommand) -> Result<(), CaptureRunError> {
    match command {
        CaptureCommand::Import(options) => {
            let report = capture::import(options)?;
            Output::Stdout.print(capture::render_import(options, &report))?;
        }
        CaptureCommand::Info(options) => {
            let info = capture::info(options)?;
            if let wirebench_capture::format::Ending::Truncated { offset, reason } = &info.ending {
                stderr_line(format_args!(
                    "wirebench: {} is cut off at byte {offset} ({reason}); what it holds before that was read",
                    options.file.display()
                ));
            }
            let text = match options.format {
                InfoFormat::Text => capture::render_info_text(options, &info),
                InfoFormat::Json => capture::render_info_json(options, &info),
            };
            Output::Stdout.print(text)?;
        }
    }
    Ok(())
}
