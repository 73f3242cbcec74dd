//! The server's first messages: Greeting (initial handshake or ERR),
//! AuthSwitchRequest and AuthMoreData, each parsed from the same payload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::handshake::{AuthMoreData, AuthSwitchRequest, Greeting, InitialHandshake};
use wirebench_protocol::response::ErrPacket;

fuzz_target!(|payload: &[u8]| {
    match Greeting::parse(payload) {
        Ok(Greeting::Handshake(hs)) => {
            assert_eq!(InitialHandshake::parse(payload).as_ref(), Ok(&hs));
            let _ = hs.display_version();
            let _ = hs.is_mariadb();
            assert!(hs.auth_plugin_data.len() <= payload.len());
        }
        Ok(Greeting::Error(err)) => assert_eq!(ErrPacket::parse(payload), Ok(err)),
        Ok(other) => panic!("a greeting this target does not know how to check: {other:?}"),
        Err(_) => {}
    }
    if let Ok(switch) = AuthSwitchRequest::parse(payload) {
        assert!(switch.plugin_name.len() + switch.plugin_data.len() < payload.len());
        assert!(!switch.plugin_name.contains(&0));
    }
    if let Ok(more) = AuthMoreData::parse(payload) {
        assert_eq!(more.data, &payload[1..]);
    }
});
