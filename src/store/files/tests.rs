//! The file store's own tests: what only the files have to say (a damaged board file). What
//! every store promises is tested once, on each store, in `store::conformance`.

use std::time::Duration;

use super::*;
use crate::error::Error;
use crate::store::change_board;

#[test]
fn a_batch_that_cannot_begin_refuses_each_of_its_changes_and_the_next_one_begins() {
    let root = tempfile::tempdir().unwrap();
    let home = Home::new(root.path().to_path_buf());
    let lock = LockPolicy::silent(Duration::from_secs(5));
    let resident = FileStore::resident(home.clone(), lock);
    let now = crate::time::now();
    std::fs::create_dir_all(home.board_file("p").parent().unwrap()).unwrap();
    std::fs::write(home.board_file("p"), "{ not a board").unwrap();
    let refused = change_board(&resident, "p", now, |_| Ok::<_, Error>(())).unwrap_err();
    assert_eq!(refused.exit_code(), 4, "{refused}");
    assert_eq!(refused.duplicate().to_string(), refused.to_string());
    std::fs::remove_file(home.board_file("p")).unwrap();
    let count = change_board(&resident, "p", now, |tx| {
        tx.board.next_id += 1;
        Ok::<_, Error>(tx.board.next_id)
    })
    .unwrap();
    assert_eq!(count, Board::new("p").next_id + 1);
}
