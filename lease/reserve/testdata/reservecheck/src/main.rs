//! reservers: the reservation seed's own reserve/lookup/reclaim/release and
//! materializer liveness behind a tiny CLI, for TestSeedReservationInterop
//! (../../seed_interop_test.go). The home is $ORCHESTRATECTL_HOME; REPO or
//! BRANCH "-" is None. Records are printed as serde_json::to_string of the
//! seed's ReservationRecord, the same bytes the seed writes.
//!
//!   reservers reserve REPO BRANCH KEY RUN_ID [hold]
//!       takes the materializer lease of RUN_ID, then reserves; prints
//!       "reserved <record>" or "already <record>" (exit 3). With "hold", a
//!       winner keeps its lease until stdin closes (SIGKILL it to leave a
//!       dead creator behind).
//!   reservers lookup REPO BRANCH KEY         prints the record or "none"
//!   reservers liveness PATH                  prints live, dead or unverifiable
//!   reservers reclaim REPO BRANCH KEY RUN_ID
//!       what orchestratectl does on a retry: reclaims only a creator proved
//!       dead by its materializer lease; prints "reclaimed <record>",
//!       "published", "changed <record>", or the creator's liveness (exit 3)
//!   reservers release REPO BRANCH KEY RUN_ID
use chrono::Utc;
use reservers::idempotency::*;
use std::io::Read;

fn opt(s: &str) -> Option<&str> {
    (s != "-").then_some(s)
}

fn die(e: impl std::fmt::Display) -> ! {
    println!("err {e}");
    std::process::exit(1)
}

/// Process start time in Unix seconds: btime + starttime / CLK_TCK.
fn start_secs(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks: u64 = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()?;
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Some(btime + ticks / tck)
}

fn creator(lease: &MaterializerLease) -> CreatorLease {
    let pid = std::process::id();
    CreatorLease {
        pid,
        pid_start_secs: start_secs(pid),
        started_at: Utc::now(),
        materializer_lease_path: Some(lease.path().display().to_string()),
    }
}

fn json(r: &ReservationRecord) -> String {
    serde_json::to_string(r).unwrap()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize| a.get(i).cloned().unwrap_or_else(|| panic!("missing argument {i}"));
    let root = || reservers::home::root_dir().unwrap_or_else(|e| die(e));
    match arg(1).as_str() {
        "reserve" => {
            let (repo, branch, key, run_id) = (arg(2), arg(3), arg(4), arg(5));
            let lease = MaterializerLease::acquire(&root(), &run_id).unwrap_or_else(|e| die(e));
            let rec = ReservationRecord::new(&run_id, creator(&lease));
            match reserve(opt(&repo), opt(&branch), &key, &rec).unwrap_or_else(|e| die(e)) {
                Reservation::Reserved => {
                    println!("reserved {}", json(&rec));
                    if a.get(6).map(String::as_str) == Some("hold") {
                        let mut buf = Vec::new();
                        let _ = std::io::stdin().read_to_end(&mut buf);
                    }
                }
                Reservation::AlreadyReserved(existing) => {
                    drop(lease);
                    println!("already {}", json(&existing));
                    std::process::exit(3);
                }
            }
        }
        "lookup" => match lookup(opt(&arg(2)), opt(&arg(3)), &arg(4)).unwrap_or_else(|e| die(e)) {
            Some(r) => println!("{}", json(&r)),
            None => println!("none"),
        },
        "liveness" => println!(
            "{}",
            match materializer_liveness(&arg(2)) {
                LeaseLiveness::Live => "live",
                LeaseLiveness::Dead => "dead",
                LeaseLiveness::Unverifiable => "unverifiable",
            }
        ),
        "reclaim" => {
            let (repo, branch, key, run_id) = (arg(2), arg(3), arg(4), arg(5));
            let observed = match lookup(opt(&repo), opt(&branch), &key).unwrap_or_else(|e| die(e)) {
                Some(r) => r,
                None => die("no reservation to reclaim"),
            };
            let live = match observed.creator.as_ref().and_then(|c| c.materializer_lease_path.as_deref()) {
                Some(p) => materializer_liveness(p),
                None => LeaseLiveness::Unverifiable,
            };
            if live != LeaseLiveness::Dead {
                println!("{}", if live == LeaseLiveness::Live { "live" } else { "unverifiable" });
                std::process::exit(3);
            }
            let lease = MaterializerLease::acquire(&root(), &run_id).unwrap_or_else(|e| die(e));
            let mut repl = ReservationRecord::new(&run_id, creator(&lease));
            repl.stale_run_ids = observed.stale_run_ids.clone();
            repl.stale_run_ids.push(observed.run_id.clone());
            let manifest = root().join("runs").join(&observed.run_id).join("manifest.json");
            match reclaim(opt(&repo), opt(&branch), &key, &observed, &repl, &manifest).unwrap_or_else(|e| die(e)) {
                Reclaim::Reclaimed => println!("reclaimed {}", json(&repl)),
                Reclaim::Published => println!("published"),
                Reclaim::Changed(cur) => println!("changed {}", json(&cur)),
            }
        }
        "release" => {
            release(opt(&arg(2)), opt(&arg(3)), &arg(4), &arg(5)).unwrap_or_else(|e| die(e));
            println!("released");
        }
        other => panic!("unknown action {other}"),
    }
}
