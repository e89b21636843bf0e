//! Open tasks that wait on each other in a circle, none of which can ever start (SPEC
//! section 4: a task waits until every task in its `after` completed). baton makes no such
//! circle (`send` waits only on tasks that exist already, and `import` leaves out the waits
//! that would close one), but a board edited by hand can hold one; `doctor` names it.

use std::collections::{HashMap, VecDeque};

use super::task::{Head, TaskId};

/// The circles among `heads`' waits, each as the ids around it from its lowest (the wait of
/// the last closes it on the first), in the order of those ids. One circle is named for
/// each group of tasks that all reach each other through their waits: a group may hold
/// more than one, and taking a wait out shows the next. Waits for a task not among `heads`
/// (finished, archived, or never there) are no part of any circle.
///
/// One pass over the waits (Tarjan's strongly connected components, without recursion, so
/// that a chain of many thousands of waits is no deeper a stack), then a breadth-first
/// search within each group for its shortest circle through its lowest id.
pub fn circles<'a>(heads: impl IntoIterator<Item = &'a Head>) -> Vec<Vec<TaskId>> {
    let heads: Vec<&Head> = heads.into_iter().collect();
    // A board edited by hand may give two tasks one id: a wait names the first.
    let mut place_of: HashMap<TaskId, usize> = HashMap::with_capacity(heads.len());
    for (place, head) in heads.iter().enumerate() {
        place_of.entry(head.id).or_insert(place);
    }
    let waits: Vec<Vec<usize>> = heads
        .iter()
        .map(|head| {
            head.after
                .iter()
                .filter_map(|id| place_of.get(id).copied())
                .collect()
        })
        .collect();

    let groups = strongly_connected(&waits);
    let mut group_of = vec![usize::MAX; heads.len()];
    for (number, group) in groups.iter().enumerate() {
        for &member in group {
            group_of[member] = number;
        }
    }
    let mut found: Vec<Vec<TaskId>> = groups
        .iter()
        .enumerate()
        .filter(|(_, group)| group.len() > 1 || waits[group[0]].contains(&group[0]))
        .filter_map(|(number, group)| {
            let first = *group.iter().min_by_key(|member| heads[**member].id)?;
            let circle = shortest_circle(first, &waits, |place| group_of[place] == number)?;
            Some(circle.into_iter().map(|place| heads[place].id).collect())
        })
        .collect();
    found.sort();
    found
}

/// The circle that task `id` waiting on `after` would close among the open tasks of
/// `heads` (its own waits as they are there left out), as the ids around it from `id`: the
/// shortest, found by a breadth-first search; `None` when it closes none.
pub fn circle_through<'a>(
    heads: impl IntoIterator<Item = &'a Head>,
    id: TaskId,
    after: &[TaskId],
) -> Option<Vec<TaskId>> {
    let waits: HashMap<TaskId, &[TaskId]> = heads
        .into_iter()
        .filter(|head| head.status.is_open() && head.id != id)
        .map(|head| (head.id, head.after.as_slice()))
        .collect();
    let mut came_from: HashMap<TaskId, TaskId> = HashMap::new();
    let mut queue: VecDeque<TaskId> = VecDeque::new();
    for first in after {
        if waits.contains_key(first) && !came_from.contains_key(first) {
            came_from.insert(*first, id);
            queue.push_back(*first);
        }
    }
    while let Some(node) = queue.pop_front() {
        for &target in waits.get(&node).copied().unwrap_or_default() {
            if target == id {
                let mut circle = vec![node];
                let mut at = node;
                while let Some(&before) = came_from.get(&at) {
                    circle.push(before);
                    at = before;
                    if before == id {
                        break;
                    }
                }
                circle.reverse();
                return Some(circle);
            }
            if waits.contains_key(&target) && !came_from.contains_key(&target) {
                came_from.insert(target, node);
                queue.push_back(target);
            }
        }
    }
    None
}

/// The groups of `waits`' nodes that all reach each other (each node alone when it is in
/// no circle), by Tarjan's algorithm run with a stack of its own.
fn strongly_connected(waits: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let count = waits.len();
    let mut order = vec![UNSEEN; count];
    let mut lowest = vec![0; count];
    let mut is_on_stack = vec![false; count];
    let mut stack: Vec<usize> = Vec::new();
    let mut groups = Vec::new();
    let mut next_order = 0;
    // The nodes being visited, each with how many of its waits are followed already.
    let mut visiting: Vec<(usize, usize)> = Vec::new();
    for root in 0..count {
        if order[root] != UNSEEN {
            continue;
        }
        order[root] = next_order;
        lowest[root] = next_order;
        next_order += 1;
        stack.push(root);
        is_on_stack[root] = true;
        visiting.push((root, 0));
        while let Some((node, followed)) = visiting.last_mut() {
            let node = *node;
            if let Some(&target) = waits[node].get(*followed) {
                *followed += 1;
                if order[target] == UNSEEN {
                    order[target] = next_order;
                    lowest[target] = next_order;
                    next_order += 1;
                    stack.push(target);
                    is_on_stack[target] = true;
                    visiting.push((target, 0));
                } else if is_on_stack[target] {
                    lowest[node] = lowest[node].min(order[target]);
                }
                continue;
            }
            visiting.pop();
            if let Some((parent, _)) = visiting.last() {
                lowest[*parent] = lowest[*parent].min(lowest[node]);
            }
            if lowest[node] == order[node] {
                let mut group = Vec::new();
                while let Some(member) = stack.pop() {
                    is_on_stack[member] = false;
                    group.push(member);
                    if member == node {
                        break;
                    }
                }
                groups.push(group);
            }
        }
    }
    groups
}

/// The shortest circle from `first` back to it through nodes `is_inside` allows, as the
/// nodes in the order their waits go, `first` first; `None` when there is none.
fn shortest_circle(
    first: usize,
    waits: &[Vec<usize>],
    is_inside: impl Fn(usize) -> bool,
) -> Option<Vec<usize>> {
    let mut came_from: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([first]);
    while let Some(node) = queue.pop_front() {
        for &target in &waits[node] {
            if target == first {
                let mut circle = vec![node];
                let mut at = node;
                while let Some(&before) = came_from.get(&at) {
                    circle.push(before);
                    at = before;
                }
                circle.reverse();
                return Some(circle);
            }
            if is_inside(target) && !came_from.contains_key(&target) {
                came_from.insert(target, node);
                queue.push_back(target);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::{Priority, Status, Task};
    use crate::time::Timestamp;

    fn head(id: u64, after: &[u64]) -> Head {
        let at = Timestamp::parse_stored("2026-11-29T10:00:00Z").unwrap();
        Head::of(&Task {
            id: TaskId(id),
            subject: format!("task {id}"),
            body: String::new(),
            files: Vec::new(),
            from: "lead".into(),
            to: "dev".into(),
            reviewer: None,
            status: Status::Pending,
            priority: Priority::Normal,
            after: after.iter().copied().map(TaskId).collect(),
            skill: None,
            review: false,
            created_at: at,
            updated_at: at,
            claimed_at: None,
            lease_expires_at: None,
            result: None,
            thread: Vec::new(),
            delivery: None,
            imported: None,
            touches: Vec::new(),
            worktree: None,
            landed: None,
            labels: Vec::new(),
        })
    }

    fn ids(circles: Vec<Vec<TaskId>>) -> Vec<Vec<u64>> {
        circles
            .into_iter()
            .map(|circle| circle.into_iter().map(|id| id.0).collect())
            .collect()
    }

    #[test]
    fn each_circle_is_named_once_from_its_lowest_id() {
        let heads = [
            head(1, &[2]),
            head(2, &[3]),
            head(3, &[1]),
            head(4, &[1]),
            head(5, &[5]),
            head(6, &[7, 9]),
            head(7, &[6]),
            head(8, &[]),
        ];
        assert_eq!(
            ids(circles(&heads)),
            vec![vec![1, 2, 3], vec![5], vec![6, 7]]
        );
    }

    #[test]
    fn waits_without_a_circle_are_none() {
        let heads = [
            head(1, &[]),
            head(2, &[1]),
            head(3, &[1, 2]),
            head(4, &[99]),
        ];
        assert!(circles(&heads).is_empty());
    }

    #[test]
    fn a_new_wait_that_closes_a_circle_is_named_from_the_task() {
        let heads = [head(1, &[]), head(2, &[1]), head(3, &[2]), head(4, &[9])];
        let through = |id, after: &[u64]| {
            let after: Vec<TaskId> = after.iter().copied().map(TaskId).collect();
            circle_through(&heads, TaskId(id), &after).map(|circle| ids(vec![circle]))
        };
        assert_eq!(through(1, &[3]), Some(vec![vec![1, 3, 2]]));
        assert_eq!(through(1, &[2, 4]), Some(vec![vec![1, 2]]));
        assert_eq!(through(3, &[4]), None);
        // Its own old waits are no part of it: T-3 waiting on T-1 alone closes nothing.
        assert_eq!(through(3, &[1]), None);
        assert_eq!(through(1, &[99]), None);
    }

    #[test]
    fn a_long_chain_closed_into_one_circle_needs_no_deep_stack() {
        let count = 50_000;
        let heads: Vec<Head> = (1..=count)
            .map(|id| head(id, &[if id == count { 1 } else { id + 1 }]))
            .collect();
        let found = circles(&heads);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), count as usize);
        assert_eq!(found[0][0], TaskId(1));
    }
}
