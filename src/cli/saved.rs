//! A saved model's text, and the warning when LIBLINEAR could not read it.

use crate::model_file::SavedModel;

/// The text of a saved model, with a warning on standard error (unless `quiet`) when LIBLINEAR
/// could not read it; optc's own predict reads any label, so the file is still worth writing.
/// `flag` names what asked for it (`--save`, `:save`).
pub(crate) fn saved_text(saved: SavedModel, flag: &str, quiet: bool) -> String {
    if let Some(why) = saved.liblinear_cannot_read().filter(|_| !quiet) {
        eprintln!("warning: {flag}: {why} (`optc predict` reads it)");
    }
    saved.to_text()
}
