#include "oa/platform.h"

#include <array>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

using G = Generation;
constexpr auto kCtc = TimestampRule::kCrystalCtc;
constexpr auto kFix = TimestampRule::kFixed;

// Sources (docs/hardware-access.md "Platform tables" says what was checked where):
//  [KIDS] linux include/drm/intel/i915_pciids.h @ torvalds/linux
//         605537aedfb2b73d623e16d1c2b6249fdb6a99ab: which ids exist, grouped by platform and GT.
//  [KPCI] linux drivers/gpu/drm/i915/i915_pci.c @ gregkh/linux
//         4a0236fe97732e31cb4a6dcb433642f9e3ef9a56: the GT each id group gets (`.gt`), and that
//         dg1_info needs i915's force_probe parameter.
//  [XPCI] linux drivers/gpu/drm/xe/xe_pci.c @ torvalds/linux
//         03d85ab36bcbcbe9dc962fccd3f8e54d7bb93b35: xe lists TGL, RKL, ADL and DG1 only with
//         require_force_probe, so i915 stays their default driver. DGFX_FEATURES (`.is_dgfx =
//         1`: `discrete`) is in dg1_desc, DG2_FEATURES (DG2, ATS-M), pvc_desc and bmg_desc; the
//         same macro of [KPCI] is in dg1_info and DG2_FEATURES.
//  [MIDS] mesa include/pci_ids/iris_pci_ids.h @ bminor/mesa-mesa
//         17fbd0df5180bc19a2b5a22378e1c88b42a78e6d (BDW and later), and for HSW and CHV
//         include/pci_ids/i965_pci_ids.h @ Igalia/mesa 450b808eea7979f973fec7f248a0f3c32e7932a1:
//         which device-info entry each id uses.
//  [MDEV] mesa src/intel/dev/intel_device_info.c @ bminor/mesa-mesa
//         011b31c26d61fd8caf7de0a2991b4bbb099582f1: num_slices, num_subslices x
//         max_eus_per_subslice (dual subslices x 16 on Gen12), num_thread_per_eu,
//         has_64bit_float and timestamp_frequency of each entry.
//  [IGTP] igt lib/i915/perf.c and lib/intel_device_info.c @
//         intel-lgci-fdo-gitlab-mirror/drm.igt-gpu-tools b3d809d537febc23792ab8d0eb6d13cf80d626c8:
//         which oa-<name>.xml a platform and GT loads (none for SKL/KBL/CFL/CML GT1, KBL GT4).
//  Lunar Lake, Battlemage and Panther Lake (Xe2/Xe3, issue 16):
//  [KIDS2] linux include/drm/intel/pciids.h @ torvalds/linux
//         0755a4e3e809610a14befc9ad28d35e2e460da68: INTEL_LNL_IDS, INTEL_BMG_G21_IDS and the
//         rest of INTEL_BMG_IDS, INTEL_PTL_IDS.
//  [MDEV3] mesa src/intel/dev/intel_device_info.c @ bminor/mesa-mesa
//         036ec0bb89c9231fa2fd95f4a079bee76b85dcc2: XE2_CONFIG (lnl, bmg) and XE3_CONFIG (ptl):
//         XEHP_PLACEHOLDER_THREADS_AND_URB (num_thread_per_eu 8), has_64bit_float, and again no
//         Xe-core or EU count ("come from hwconfig tables").
//  [IGTX] igt lib/xe/xe_oa.c @ drm.igt-gpu-tools b3d809d537fe intel_xe_perf_for_devinfo():
//         is_lunarlake loads oa-lnl.xml, is_battlemage oa-bmg.xml, is_pantherlake oa-ptl.xml.
//         It counts one EU per bit of xe's SIMD16 EU mask (a vector engine), so $EuCoresTotalCount
//         is the number of vector engines; oaprof's `eus` column counts them the same way.
//  The Xe-core counts are those of the largest part of each die (LNL 8, BMG-G21 20, PTL 12) and
//  BMG-G31's 32 (E220-E223): no upstream table holds them, so every row is counts_from_mesa =
//  false and xe's GT topology query gives the truth; each Xe-core has 8 vector engines. xe, not
//  i915, binds them (i915_pci.c lists none), and BMG is a discrete card.
//  Raptor Lake, Meteor Lake and Arrow Lake (added for issue 15):
//  [KPCI2] linux drivers/gpu/drm/i915/i915_pci.c @ Kingxukai/linux
//         0291023e7330da28f2f7453c87c2ab7082d8360f (a mainline mirror newer than [KPCI]): RPL-S
//         ids bind adl_s_info, RPL-U and RPL-P adl_p_info, MTL and ARL ids mtl_info (graphics IP
//         12.70, no .gt, no require_force_probe; the older [KPCI] still forced MTL's probe).
//         [XPCI] binds RPL and MTL/ARL too, behind require_force_probe (mtl_desc).
//  [MDEV2] mesa src/intel/dev/intel_device_info.c @ bminor/mesa-mesa
//         036ec0bb89c9231fa2fd95f4a079bee76b85dcc2: rpl (GFX12_CONFIG(1, 1, 4), 2 dual
//         subslices), rpl_p (GFX12_GT_CONFIG(2)); MTL_CONFIG for mtl_u, mtl_h, arl_u, arl_h:
//         XEHP_FEATURES (verx10 125), num_thread_per_eu 8, has_64bit_float, and no subslice or
//         EU count ("(Sub)slice info ... come from hwconfig tables").
//  [MPERF] mesa src/intel/perf/intel_perf.c @ bminor/mesa-mesa
//         03fc7d6a6d769be666435e04ec01778b56576170: MTL and ARL load the GT2 (mtlgt2/arlgt1)
//         metrics up to 64 EUs and the GT3 (mtlgt3/arlgt2) ones up to 128. With no count in
//         Mesa's table, oaprof assumes those maxima (4 and 8 Xe-cores of 16 EUs), marked
//         counts_from_mesa = false; i915's topology query gives the truth.
//  [IGTM] igt lib/i915/perf.c and lib/i915_pciids_local.h @
//         intel-lgci-fdo-gitlab-mirror/drm.igt-gpu-tools b3d809d537febc23792ab8d0eb6d13cf80d626c8:
//         mtlgt2 for INTEL_MTL_M_IDS (0x7D60, 0x7D67), INTEL_MTL_P_GT2_IDS (0x7D45) and
//         INTEL_ARL_GT1_IDS (0x7D41, 0x7D67); mtlgt3 for INTEL_MTL_P_GT3_IDS (0x7D55, 0x7DD5)
//         and INTEL_ARL_GT2_IDS (0x7D51, 0x7DD1); RPL-S, RPL-P, RPL-U load oa-adl.xml
//         (lib/intel_device_info.c). 0x7D40 is in none of IGT's lists there, but in IGT 1.27.1's
//         INTEL_MTL_M_IDS (lib/i915_pciids.h @ 2b29e8ac07fbcfadc48b9d60e4d736a6e3b289ab) and is
//         Mesa's mtl_u like 0x7D45: mtlgt2. 0xB640 (ARL-S) is in none: no IGT file.
//  DG2 (Arc A-series) and ATS-M (Data Center GPU Flex), graphics IP 12.55 (issue 30):
//  [KIDS2] as above: INTEL_DG2_G10_{D,E,M}_IDS, INTEL_DG2_G11_{D,E,M}_IDS, INTEL_DG2_G12_{D,M}_IDS,
//         INTEL_ATS_M150_IDS (0x56C0, 0x56C2) and INTEL_ATS_M75_IDS (0x56C1): 28 ids.
//  [MIDS] iris_pci_ids.h @ 17fbd0df5180 lists the same 28 as dg2_g10/g11/g12 and atsm_g10/g11,
//         with the product names the rows carry ("Intel(R) Arc(tm) A770 Graphics" for 0x56A0).
//  [MDEV3] DG2_CONFIG: XEHP_FEATURES (verx10 125, no has_64bit_float: GFX12_FEATURES keeps
//         Gen11's false) and XEHP_PLACEHOLDER_THREADS_AND_URB (num_thread_per_eu 8, and no
//         Xe-core or EU count: "come from hwconfig tables"), has_local_mem.
//  [IGTD] igt lib/i915/perf.c @ b3d809d537fe is_acm_gt1/2/3 and intel_perf_for_devinfo():
//         acmgt1 for INTEL_DG2_G11_IDS and INTEL_ATS_M75_IDS, acmgt2 for INTEL_DG2_G12_IDS,
//         acmgt3 for INTEL_DG2_G10_IDS and INTEL_ATS_M150_IDS (IGT's lib/pciids.h at that commit
//         lists the same 28 ids as the kernel), eu_threads_count 8, and the OA timestamp shifted.
//  The Xe-core counts are the full dies' as Intel's product pages give the largest part of each
//  (G10 32: A770, Flex 170; G11 8: A380, Flex 140 per GPU; G12 16: Pro A60): no upstream table
//  holds them (nor the 12.55 GT split), so every row is
//  counts_from_mesa = false and i915's topology query gives the truth; 16 EUs per Xe-core.
//  i915 binds them by default (dg2_info, atsm_info in i915_pci.c [KPCI2], no force_probe); xe
//  lists dg2_desc only behind require_force_probe [XPCI3].
//  Known but not supported (issue 30, item 6): Ponte Vecchio, Wildcat Lake, Nova Lake S and P,
//  Crescent Island; and the DG2 ids only Intel's compute runtime lists:
//  [NEO]  intel/compute-runtime shared/source/xe_hpg_core/dg2/device_ids_configs_dg2.h @
//         e37c60bf2ad415d6f60af8b89b849a30a67d8ac1: 0x4F80-0x4F84 and 0x56AF (A760A) as
//         DG2-G10, 0x4F87, 0x4F88 as G11, 0x4F85, 0x4F86 as G12. No kernel list [KIDS2] has
//         them, so neither i915 nor xe binds them, and IGT maps none of them.
//  [KIDS2] as above: INTEL_PVC_IDS, INTEL_WCL_IDS, INTEL_NVLS_IDS, INTEL_NVLP_IDS, INTEL_CRI_IDS.
//  [XPCI3] linux drivers/gpu/drm/xe/xe_pci.c @ torvalds/linux
//         0755a4e3e809610a14befc9ad28d35e2e460da68: pciidlist binds WCL to ptl_desc (no
//         require_force_probe), NVL-S to nvls_desc, CRI to cri_desc (discrete, no display) and
//         NVL-P to nvlp_desc, those three with require_force_probe; pvc_desc is in no list. The
//         older [XPCI] and 7596d839f622 bind none of them; i915_pci.c [KPCI2] lists none.
//  [XOA]  linux drivers/gpu/drm/xe/xe_oa.c @ torvalds/linux 0755a4e3e809: xe_oa_init() runs OA
//         on GRAPHICS_VER >= 12 with GuC submission (not on an SR-IOV VF), and
//         xe_oa_init_supported_formats() gives GRAPHICS_VER >= 20 the PEC formats.
//  [IGTX2] igt lib/pciids.h, lib/intel_device_info.c, lib/xe/xe_oa.c @ b3d809d537fe: 0xFD80 and
//         0xFD81 sit in IGT's INTEL_PTL_IDS (intel_pantherlake_info: oa-ptl.xml); PVC loads
//         oa-pvc.xml; IGT lists no NVL or CRI id.
// tests/oa/data/pci_ids_reference.tsv is these facts typed per id; platform_reference_test.cc
// checks this table against it (and tests/oa/data/pci_ids_unsupported.tsv the unsupported ones).
//
// The rule where the sources disagree: the kernel decides which ids exist, their GT and so the
// IGT metric file (IGT takes the kernel's GT); Mesa decides EU, subslice and thread counts.
// Where Mesa lists no id (BDW 0x163x reserved ids, ICL 0x8A70, RKL 0x4C80) the row's counts are
// an assumption, marked counts_from_mesa = false; i915's topology query gives the truth.
// Minimum and maximum frequencies are nominal defaults for offline models only: no upstream
// table holds them (i915 reads RP0/RPn from the part), so they are not checked.

// Per-generation facts [MDEV]: Gen7.5 and Gen8 12.5 MHz timestamps, 7 threads per EU, FP64;
// Gen9 big cores 12 MHz; Gen9 LP (BXT, GLK) 19.2 MHz and 6 threads per EU (GFX9_LP_FEATURES);
// Gen11 and Gen12 have no FP64 (has_64bit_float = false) and a timestamp that i915 reports
// (crystal and CTC shift), 19.2 MHz being only the default until read.
constexpr Platform gen7_5(std::string_view codename, int gt, int slices, int subslices, int eus,
                          double max_mhz) {
  return {codename, "hsw", G::kGen7_5, gt, slices, subslices, eus, 12.5e6, max_mhz, kFix, 200};
}
constexpr Platform gen8(std::string_view codename, std::string_view file, int gt, int slices,
                        int subslices, int eus, double max_mhz, double min_mhz) {
  return {codename, file, G::kGen8, gt, slices, subslices, eus, 12.5e6, max_mhz, kFix, min_mhz};
}
constexpr Platform gen9(std::string_view codename, std::string_view file, int gt, int slices,
                        int subslices, int eus, double max_mhz, double min_mhz,
                        std::string_view gt_name = {}) {
  return {codename, file, G::kGen9, gt,   slices,  subslices,
          eus,      12e6, max_mhz,  kFix, min_mhz, gt_name};
}
constexpr Platform gen9_lp(std::string_view codename, std::string_view file, int subslices, int eus,
                           double max_mhz) {
  Platform p{codename, file, G::kGen9, 1, 1, subslices, eus, 19.2e6, max_mhz, kFix, 200};
  p.threads_per_eu = 6;
  return p;
}
constexpr Platform gen11(std::string_view codename, std::string_view file, int gt, int subslices,
                         int eus, double max_mhz, double min_mhz, std::string_view gt_name = {}) {
  Platform p{codename, file,   G::kGen11, gt,   1,       subslices,
             eus,      19.2e6, max_mhz,   kCtc, min_mhz, gt_name};
  p.has_fp64 = false;
  return p;
}
// Gen12 subslices are dual subslices of 16 EUs, as Mesa and i915's topology query count them.
constexpr Platform gen12(std::string_view codename, std::string_view file, int gt,
                         int dual_subslices, double max_mhz, double min_mhz,
                         std::string_view gt_name = {}) {
  Platform p{codename, file,    G::kGen12, gt,      1,      dual_subslices, 16 * dual_subslices,
             19.2e6,   max_mhz, kCtc,      min_mhz, gt_name};
  p.has_fp64 = false;
  return p;
}

// One row per distinct (platform, GT, counts); the comment names Mesa's device-info entry.
constexpr Platform kHswGt1 = gen7_5("HSW", 1, 1, 1, 10, 1000);  // hsw_gt1: 1 x 10
constexpr Platform kHswGt2 = gen7_5("HSW", 2, 1, 2, 20, 1200);  // hsw_gt2: 2 x 10
constexpr Platform kHswGt3 = gen7_5("HSW", 3, 2, 4, 40, 1300);  // hsw_gt3: 2 slices, 2 x 10 each
constexpr Platform kBdwGt1 = gen8("BDW", "bdw", 1, 1, 2, 12, 1000, 300);  // bdw_gt1: 2 x 6
constexpr Platform kBdwGt2 = gen8("BDW", "bdw", 2, 1, 3, 24, 1000, 300);  // bdw_gt2: 3 x 8
constexpr Platform kBdwGt3 = gen8("BDW", "bdw", 3, 2, 6, 48, 1100, 300);  // bdw_gt3: 2 x 3 x 8
constexpr Platform kChv = gen8("CHV", "chv", 1, 1, 2, 16, 600, 200);      // chv: 2 x 8
constexpr Platform kSklGt1 = gen9("SKL", "", 1, 1, 2, 12, 1050, 300);     // skl_gt1: 2 x 6
// 0x1913/0x1915/0x1917: GT1 to the kernel and so to IGT (INTEL_SKL_*GT1_IDS, "GT1.5"; no IGT
// metric set), skl_gt2 to Mesa (3 x 8).
constexpr Platform kSklGt15 = gen9("SKL", "", 1, 1, 3, 24, 1050, 300, "GT1.5");
constexpr Platform kSklGt2 = gen9("SKL", "sklgt2", 2, 1, 3, 24, 1150, 300);  // skl_gt2: 3 x 8
constexpr Platform kSklGt3 = gen9("SKL", "sklgt3", 3, 2, 6, 48, 1100, 300);  // skl_gt3: 2x3x8
// 0x192A: GT3 to the kernel (INTEL_SKL_GT3_IDS "SRV GT3"), skl_gt4 to Mesa (3 x 3 x 8).
constexpr Platform kSklGt3Srv = gen9("SKL", "sklgt3", 3, 3, 9, 72, 1100, 300);
constexpr Platform kSklGt4 = gen9("SKL", "sklgt4", 4, 3, 9, 72, 1150, 300);      // skl_gt4: 3x3x8
constexpr Platform kBxt = gen9_lp("BXT", "bxt", 3, 18, 750);                     // bxt: 3 x 6
constexpr Platform kBxt2x6 = gen9_lp("BXT", "bxt", 2, 12, 750);                  // bxt_2x6: 2 x 6
constexpr Platform kGlk = gen9_lp("GLK", "glk", 3, 18, 800);                     // glk: 3 x 6
constexpr Platform kGlk2x6 = gen9_lp("GLK", "glk", 2, 12, 750);                  // glk_2x6: 2 x 6
constexpr Platform kKblGt1 = gen9("KBL", "", 1, 1, 2, 12, 1100, 300);            // kbl_gt1: 2 x 6
constexpr Platform kKblGt15 = gen9("KBL", "", 1, 1, 3, 18, 1100, 300, "GT1.5");  // kbl_gt1_5
constexpr Platform kKblGt2 = gen9("KBL", "kblgt2", 2, 1, 3, 24, 1150, 300);      // kbl_gt2: 3 x 8
constexpr Platform kKblGt3 = gen9("KBL", "kblgt3", 3, 2, 6, 48, 1100, 300);      // kbl_gt3: 2x3x8
constexpr Platform kKblGt4 = gen9("KBL", "", 4, 3, 9, 72, 1150, 300);  // kbl_gt4: 3 x 3 x 8
constexpr Platform kAmlKblGt2 = gen9("AML", "kblgt2", 2, 1, 3, 24, 1050, 300);  // kbl_gt2
// 0x87CA: INTEL_AML_CFL_GT2_IDS, cfl_gt2_info to the kernel and IGT (cflgt2), cfl_gt2 to Mesa.
constexpr Platform kAmlCflGt2 = gen9("AML", "cflgt2", 2, 1, 3, 24, 1050, 300);
constexpr Platform kCflGt1 = gen9("CFL", "", 1, 1, 2, 12, 1050, 350);        // cfl_gt1: 2 x 6
constexpr Platform kCflGt2 = gen9("CFL", "cflgt2", 2, 1, 3, 24, 1200, 350);  // cfl_gt2: 3 x 8
constexpr Platform kCflGt3 = gen9("CFL", "cflgt3", 3, 2, 6, 48, 1150, 300);  // cfl_gt3: 2x3x8
constexpr Platform kWhlGt1 = gen9("WHL", "", 1, 1, 2, 12, 1000, 300);        // cfl_gt1
constexpr Platform kWhlGt2 = gen9("WHL", "cflgt2", 2, 1, 3, 24, 1150, 300);  // cfl_gt2
constexpr Platform kWhlGt3 = gen9("WHL", "cflgt3", 3, 2, 6, 48, 1100, 300);  // cfl_gt3
constexpr Platform kCmlGt1 = gen9("CML", "", 1, 1, 2, 12, 1050, 350);        // cfl_gt1
constexpr Platform kCmlGt2 = gen9("CML", "cflgt2", 2, 1, 3, 24, 1200, 350);  // cfl_gt2
// ICL: the kernel gives no GT (icl_info); Mesa's entries are GT2 8 x 8, GT1.5 6 x 8, GT1 4 x 8
// and GT0.5 1 x 8, and IGT loads oa-icl.xml for all of them.
constexpr Platform kIclGt2 = gen11("ICL", "icl", 2, 8, 64, 1100, 300);
constexpr Platform kIclGt15 = gen11("ICL", "icl", 1, 6, 48, 1100, 300, "GT1.5");
constexpr Platform kIclGt1 = gen11("ICL", "icl", 1, 4, 32, 1100, 300);
constexpr Platform kIclGt05 = gen11("ICL", "icl", 1, 1, 8, 1100, 300, "GT0.5");
// EHL/JSL: one kernel list per platform, while Mesa gives each id its own subslice x EU
// configuration (ehl_<subslices>x<EUs per subslice>); each row is one of those, Mesa's value for
// the SKU that id names. IGT loads oa-ehl.xml for both platforms.
constexpr Platform kEhl2x4 = gen11("EHL", "ehl", 1, 2, 8, 850, 250);
constexpr Platform kEhl4x4 = gen11("EHL", "ehl", 1, 4, 16, 850, 250);
constexpr Platform kEhl2x8 = gen11("EHL", "ehl", 1, 2, 16, 850, 250);
constexpr Platform kEhl4x5 = gen11("EHL", "ehl", 1, 4, 20, 850, 250);
constexpr Platform kEhl4x8 = gen11("EHL", "ehl", 1, 4, 32, 850, 250);
constexpr Platform kJsl4x4 = gen11("JSL", "ehl", 1, 4, 16, 850, 250);
constexpr Platform kJsl2x8 = gen11("JSL", "ehl", 1, 2, 16, 850, 250);
constexpr Platform kJsl4x5 = gen11("JSL", "ehl", 1, 4, 20, 850, 250);
constexpr Platform kJsl4x6 = gen11("JSL", "ehl", 1, 4, 24, 850, 250);
constexpr Platform kJsl4x8 = gen11("JSL", "ehl", 1, 4, 32, 850, 250);
// Gen12 [MDEV]: GT1 2 dual subslices, GT2 6, GT0.5 1 (GFX12_GT_FEATURES, GFX12_GT05_FEATURES).
constexpr Platform kTglGt1 = gen12("TGL", "tglgt1", 1, 2, 1450, 350);          // tgl_gt1
constexpr Platform kTglGt2 = gen12("TGL", "tglgt2", 2, 6, 1350, 100);          // tgl_gt2
constexpr Platform kRklGt1 = gen12("RKL", "rkl", 1, 2, 1300, 350);             // rkl_gt1
constexpr Platform kRklGt05 = gen12("RKL", "rkl", 1, 1, 1300, 350, "GT0.5");   // rkl_gt05
constexpr Platform kAdlSGt1 = gen12("ADL", "adl", 1, 2, 1450, 300);            // adl_gt1
constexpr Platform kAdlSGt05 = gen12("ADL", "adl", 1, 1, 1450, 300, "GT0.5");  // adl_gt05
constexpr Platform kAdlPGt2 = gen12("ADL", "adl", 2, 6, 1400, 100);            // adl_gt2
constexpr Platform kAdlNGt1 = gen12("ADL", "adl", 1, 2, 1250, 100);            // adl_gt1
constexpr Platform kAdlNGt05 = gen12("ADL", "adl", 1, 1, 1250, 100, "GT0.5");  // adl_gt05
// DG1 and SG1 (0x4907): GFX12_DG1_SG1_FEATURES, 6 dual subslices; i915's dg1_info needs
// force_probe [KPCI], and so does xe's [XPCI].
constexpr Platform kDg1 = [] {
  Platform p = gen12("DG1", "dg1", 2, 6, 1550, 300);
  p.force_probe = true;
  p.discrete = true;  // dg1_info and xe's dg1_desc have DGFX_FEATURES [KPCI, XPCI]
  return p;
}();
// Raptor Lake [MDEV2]: rpl (RPL-S, GT1, 2 dual subslices), rpl_p (RPL-P and RPL-U, GT2, 6).
constexpr Platform kRplS = gen12("RPL", "adl", 1, 2, 1550, 300);  // rpl
constexpr Platform kRplP = gen12("RPL", "adl", 2, 6, 1500, 100);  // rpl_p
// Xe-HPG [MDEV3, IGTD]: discrete DG2 and ATS-M dies, Xe-cores of 16 EUs with 8 threads each,
// no FP64. `gt` follows IGT's file names (acmgt1 G11, acmgt2 G12, acmgt3 G10); i915 gives the
// dies no GT number, so the label is the die. 300 MHz to the nominal boost are model defaults.
constexpr Platform xe_hpg(std::string_view codename, std::string_view file, int gt, int xe_cores,
                          double max_mhz, std::string_view die) {
  Platform p{codename,      file,   G::kXeHpg, gt,   1,   xe_cores,
             16 * xe_cores, 19.2e6, max_mhz,   kCtc, 300, die};
  p.threads_per_eu = 8;
  p.has_fp64 = false;
  p.discrete = true;
  return p;
}
constexpr Platform kDg2G10 = xe_hpg("DG2", "acmgt3", 3, 32, 2400, "G10");     // dg2_g10
constexpr Platform kDg2G11 = xe_hpg("DG2", "acmgt1", 1, 8, 2450, "G11");      // dg2_g11
constexpr Platform kDg2G12 = xe_hpg("DG2", "acmgt2", 2, 16, 2050, "G12");     // dg2_g12
constexpr Platform kAtsM150 = xe_hpg("ATS-M", "acmgt3", 3, 32, 2050, "G10");  // atsm_g10
constexpr Platform kAtsM75 = xe_hpg("ATS-M", "acmgt1", 1, 8, 2050, "G11");    // atsm_g11
// Xe-LPG [MDEV2, MPERF]: Xe-cores (dual subslices) of 16 EUs with 8 threads each, FP64.
constexpr Platform xe_lpg(std::string_view codename, std::string_view file, int gt, int xe_cores,
                          double max_mhz) {
  Platform p{codename, file, G::kXeLpg, gt, 1, xe_cores, 16 * xe_cores, 19.2e6, max_mhz, kCtc, 100};
  p.threads_per_eu = 8;
  return p;
}
constexpr Platform kMtlGt2 = xe_lpg("MTL", "mtlgt2", 2, 4, 1950);  // mtl_u
constexpr Platform kMtlGt3 = xe_lpg("MTL", "mtlgt3", 3, 8, 2250);  // mtl_h
constexpr Platform kArlGt1 = xe_lpg("ARL", "mtlgt2", 1, 4, 1950);  // arl_u
constexpr Platform kArlSNoIgt = xe_lpg("ARL", "", 1, 4, 1950);     // arl_u, 0xB640
constexpr Platform kArlGt2 = xe_lpg("ARL", "mtlgt3", 2, 8, 2350);  // arl_h
// Xe2 and Xe3 [MDEV3, IGTX]: Xe-cores of 8 vector engines with 8 threads each, FP64; driven by
// xe. Timestamp: xe reports the OA unit's frequency (drm_xe_oa_unit.oa_timestamp_freq, the GT's
// reference clock on these parts); 19.2 MHz is only the default until read.
// Their GT label is the architecture: the kernel gives these parts no GT number.
constexpr Platform xe2(std::string_view codename, std::string_view file, int xe_cores,
                       double max_mhz, std::string_view arch = "Xe2") {
  Platform p{codename,     file,   G::kXe2, 0,    1,   xe_cores,
             8 * xe_cores, 19.2e6, max_mhz, kCtc, 400, arch};
  p.threads_per_eu = 8;
  p.driver = KernelDriver::kXe;
  return p;
}
constexpr Platform kLnl = xe2("LNL", "lnl", 8, 2050);  // lnl
// Battlemage is a card: xe_pci.c's bmg_desc has DGFX_FEATURES (`.is_dgfx = 1`) [XPCI].
constexpr Platform bmg(int xe_cores) {
  Platform p = xe2("BMG", "bmg", xe_cores, 2850);
  p.discrete = true;
  return p;
}
constexpr Platform kBmgG21 = bmg(20);  // bmg
constexpr Platform kBmgG31 = bmg(32);  // bmg
// xe_pci.c's ptl_desc has require_force_probe @ torvalds/linux 03d85ab36bcb ([XPCI]).
constexpr Platform kPtl = [] {
  Platform p = xe2("PTL", "ptl", 12, 2500, "Xe3");  // ptl
  p.force_probe = true;
  return p;
}();

// Device ids [KIDS], grouped and ordered as the kernel lists them; each comment names the
// kernel's macro. A plain array: clang refuses deducing std::array of this many elements.
// [IGTM]: why 0x7D40's file is mtlgt2 although no IGT of today maps it to one.
constexpr std::string_view kMtl7D40MetricFile =
    "oaprof's inference, not IGT's: IGT (b3d809d537fe) maps 0x7D40 to no metric file (it is in "
    "none of lib/i915/perf.c's MTL or ARL lists, and lib/xe/xe_oa.c loads no MTL file); IGT "
    "1.27.1 listed it as MTL-M (mtlgt2) and Mesa gives it mtl_u, as 0x7D45 (mtlgt2)";

constexpr PciId kPciIds[] = {
    // INTEL_HSW_GT1_IDS (ULT, ULX, desktop, SDV, CRW): hsw_gt1 in Mesa.
    PciId{0x0A02, &kHswGt1},
    PciId{0x0A06, &kHswGt1},
    PciId{0x0A0A, &kHswGt1},
    PciId{0x0A0B, &kHswGt1},
    PciId{0x0A0E, &kHswGt1},
    PciId{0x0402, &kHswGt1},
    PciId{0x0406, &kHswGt1},
    PciId{0x040A, &kHswGt1},
    PciId{0x040B, &kHswGt1},
    PciId{0x040E, &kHswGt1},
    PciId{0x0C02, &kHswGt1},
    PciId{0x0C06, &kHswGt1},
    PciId{0x0C0A, &kHswGt1},
    PciId{0x0C0B, &kHswGt1},
    PciId{0x0C0E, &kHswGt1},
    PciId{0x0D02, &kHswGt1},
    PciId{0x0D06, &kHswGt1},
    PciId{0x0D0A, &kHswGt1},
    PciId{0x0D0B, &kHswGt1},
    PciId{0x0D0E, &kHswGt1},
    // INTEL_HSW_GT2_IDS: hsw_gt2.
    PciId{0x0A12, &kHswGt2},
    PciId{0x0A16, &kHswGt2},
    PciId{0x0A1A, &kHswGt2},
    PciId{0x0A1B, &kHswGt2},
    PciId{0x0A1E, &kHswGt2},
    PciId{0x0412, &kHswGt2},
    PciId{0x0416, &kHswGt2},
    PciId{0x041A, &kHswGt2},
    PciId{0x041B, &kHswGt2},
    PciId{0x041E, &kHswGt2},
    PciId{0x0C12, &kHswGt2},
    PciId{0x0C16, &kHswGt2},
    PciId{0x0C1A, &kHswGt2},
    PciId{0x0C1B, &kHswGt2},
    PciId{0x0C1E, &kHswGt2},
    PciId{0x0D12, &kHswGt2},
    PciId{0x0D16, &kHswGt2},
    PciId{0x0D1A, &kHswGt2},
    PciId{0x0D1B, &kHswGt2},
    PciId{0x0D1E, &kHswGt2},
    // INTEL_HSW_GT3_IDS: hsw_gt3.
    PciId{0x0A22, &kHswGt3},
    PciId{0x0A26, &kHswGt3},
    PciId{0x0A2A, &kHswGt3},
    PciId{0x0A2B, &kHswGt3},
    PciId{0x0A2E, &kHswGt3},
    PciId{0x0422, &kHswGt3},
    PciId{0x0426, &kHswGt3},
    PciId{0x042A, &kHswGt3},
    PciId{0x042B, &kHswGt3},
    PciId{0x042E, &kHswGt3},
    PciId{0x0C22, &kHswGt3},
    PciId{0x0C26, &kHswGt3},
    PciId{0x0C2A, &kHswGt3},
    PciId{0x0C2B, &kHswGt3},
    PciId{0x0C2E, &kHswGt3},
    PciId{0x0D22, &kHswGt3},
    PciId{0x0D26, &kHswGt3},
    PciId{0x0D2A, &kHswGt3},
    PciId{0x0D2B, &kHswGt3},
    PciId{0x0D2E, &kHswGt3},
    // INTEL_BDW_GT1_IDS, INTEL_BDW_GT2_IDS, INTEL_BDW_GT3_IDS.
    PciId{0x1606, &kBdwGt1},
    PciId{0x160B, &kBdwGt1},
    PciId{0x160E, &kBdwGt1},
    PciId{0x1602, &kBdwGt1},
    PciId{0x160A, &kBdwGt1},
    PciId{0x160D, &kBdwGt1},
    PciId{0x1616, &kBdwGt2},
    PciId{0x161B, &kBdwGt2},
    PciId{0x161E, &kBdwGt2},
    PciId{0x1612, &kBdwGt2},
    PciId{0x161A, &kBdwGt2},
    PciId{0x161D, &kBdwGt2},
    PciId{0x1626, &kBdwGt3},
    PciId{0x162B, &kBdwGt3},
    PciId{0x162E, &kBdwGt3},
    PciId{0x1622, &kBdwGt3},
    PciId{0x162A, &kBdwGt3},
    PciId{0x162D, &kBdwGt3},
    // INTEL_BDW_RSVD_IDS: bdw_rsvd_info is GT3 [KPCI]; Mesa lists none of them, so the GT3
    // counts are assumed.
    PciId{0x1636, &kBdwGt3, false},
    PciId{0x163B, &kBdwGt3, false},
    PciId{0x163E, &kBdwGt3, false},
    PciId{0x1632, &kBdwGt3, false},
    PciId{0x163A, &kBdwGt3, false},
    PciId{0x163D, &kBdwGt3, false},
    // INTEL_CHV_IDS.
    PciId{0x22B0, &kChv},
    PciId{0x22B1, &kChv},
    PciId{0x22B2, &kChv},
    PciId{0x22B3, &kChv},
    // INTEL_SKL_GT1_IDS (with the GT1.5 ids 0x1913, 0x1915, 0x1917), GT2, GT3, GT4.
    PciId{0x1906, &kSklGt1},
    PciId{0x1913, &kSklGt15},
    PciId{0x190E, &kSklGt1},
    PciId{0x1915, &kSklGt15},
    PciId{0x1902, &kSklGt1},
    PciId{0x190A, &kSklGt1},
    PciId{0x190B, &kSklGt1},
    PciId{0x1917, &kSklGt15},
    PciId{0x1916, &kSklGt2},
    PciId{0x1921, &kSklGt2},
    PciId{0x191E, &kSklGt2},
    PciId{0x1912, &kSklGt2},
    PciId{0x191A, &kSklGt2},
    PciId{0x191B, &kSklGt2},
    PciId{0x191D, &kSklGt2},
    PciId{0x1923, &kSklGt3},
    PciId{0x1926, &kSklGt3},
    PciId{0x1927, &kSklGt3},
    PciId{0x192A, &kSklGt3Srv},
    PciId{0x192B, &kSklGt3},
    PciId{0x192D, &kSklGt3},
    PciId{0x1932, &kSklGt4},
    PciId{0x193A, &kSklGt4},
    PciId{0x193B, &kSklGt4},
    PciId{0x193D, &kSklGt4},
    // INTEL_BXT_IDS (0x1A85, 0x5A85: bxt_2x6), INTEL_GLK_IDS (0x3185: glk_2x6).
    PciId{0x0A84, &kBxt},
    PciId{0x1A84, &kBxt},
    PciId{0x1A85, &kBxt2x6},
    PciId{0x5A84, &kBxt},
    PciId{0x5A85, &kBxt2x6},
    PciId{0x3184, &kGlk},
    PciId{0x3185, &kGlk2x6},
    // INTEL_KBL_GT1_IDS (0x5913, 0x5915: kbl_gt1_5), GT2, GT3, GT4; INTEL_AML_KBL_GT2_IDS.
    PciId{0x5906, &kKblGt1},
    PciId{0x5913, &kKblGt15},
    PciId{0x590E, &kKblGt1},
    PciId{0x5915, &kKblGt15},
    PciId{0x5902, &kKblGt1},
    PciId{0x5908, &kKblGt1},
    PciId{0x590A, &kKblGt1},
    PciId{0x590B, &kKblGt1},
    PciId{0x5916, &kKblGt2},
    PciId{0x5921, &kKblGt2},
    PciId{0x591E, &kKblGt2},
    PciId{0x5912, &kKblGt2},
    PciId{0x5917, &kKblGt2},
    PciId{0x591A, &kKblGt2},
    PciId{0x591B, &kKblGt2},
    PciId{0x591D, &kKblGt2},
    PciId{0x5926, &kKblGt3},
    PciId{0x5923, &kKblGt3},
    PciId{0x5927, &kKblGt3},
    PciId{0x593B, &kKblGt4},
    PciId{0x591C, &kAmlKblGt2},
    PciId{0x87C0, &kAmlKblGt2},
    // INTEL_AML_CFL_GT2_IDS (part of INTEL_CFL_IDS).
    PciId{0x87CA, &kAmlCflGt2},
    // INTEL_CML_GT1_IDS, INTEL_CML_U_GT1_IDS, INTEL_CML_GT2_IDS, INTEL_CML_U_GT2_IDS.
    PciId{0x9BA2, &kCmlGt1},
    PciId{0x9BA4, &kCmlGt1},
    PciId{0x9BA5, &kCmlGt1},
    PciId{0x9BA8, &kCmlGt1},
    PciId{0x9B21, &kCmlGt1},
    PciId{0x9BAA, &kCmlGt1},
    PciId{0x9BAC, &kCmlGt1},
    PciId{0x9BC2, &kCmlGt2},
    PciId{0x9BC4, &kCmlGt2},
    PciId{0x9BC5, &kCmlGt2},
    PciId{0x9BC6, &kCmlGt2},
    PciId{0x9BC8, &kCmlGt2},
    PciId{0x9BE6, &kCmlGt2},
    PciId{0x9BF6, &kCmlGt2},
    PciId{0x9B41, &kCmlGt2},
    PciId{0x9BCA, &kCmlGt2},
    PciId{0x9BCC, &kCmlGt2},
    // INTEL_CFL_S_GT1_IDS, INTEL_CFL_H_GT1_IDS, INTEL_CFL_S_GT2_IDS, INTEL_CFL_H_GT2_IDS,
    // INTEL_CFL_U_GT2_IDS, INTEL_CFL_U_GT3_IDS.
    PciId{0x3E90, &kCflGt1},
    PciId{0x3E93, &kCflGt1},
    PciId{0x3E99, &kCflGt1},
    PciId{0x3E9C, &kCflGt1},
    PciId{0x3E91, &kCflGt2},
    PciId{0x3E92, &kCflGt2},
    PciId{0x3E96, &kCflGt2},
    PciId{0x3E98, &kCflGt2},
    PciId{0x3E9A, &kCflGt2},
    PciId{0x3E94, &kCflGt2},
    PciId{0x3E9B, &kCflGt2},
    PciId{0x3EA9, &kCflGt2},
    PciId{0x3EA5, &kCflGt3},
    PciId{0x3EA6, &kCflGt3},
    PciId{0x3EA7, &kCflGt3},
    PciId{0x3EA8, &kCflGt3},
    // INTEL_WHL_U_GT1_IDS, INTEL_WHL_U_GT2_IDS, INTEL_WHL_U_GT3_IDS.
    PciId{0x3EA1, &kWhlGt1},
    PciId{0x3EA4, &kWhlGt1},
    PciId{0x3EA0, &kWhlGt2},
    PciId{0x3EA3, &kWhlGt2},
    PciId{0x3EA2, &kWhlGt3},
    // INTEL_ICL_IDS: Mesa's icl_gt2, icl_gt1_5, icl_gt1, icl_gt0_5 per id. Mesa has no 0x8A70;
    // the kernel lists it beside 0x8A71 (GT0.5), whose counts it takes (the smallest ICL, so
    // peaks are never overstated).
    PciId{0x8A50, &kIclGt2},
    PciId{0x8A51, &kIclGt2},
    PciId{0x8A52, &kIclGt2},
    PciId{0x8A53, &kIclGt2},
    PciId{0x8A54, &kIclGt15},
    PciId{0x8A56, &kIclGt1},
    PciId{0x8A57, &kIclGt15},
    PciId{0x8A58, &kIclGt1},
    PciId{0x8A59, &kIclGt15},
    PciId{0x8A5A, &kIclGt15},
    PciId{0x8A5B, &kIclGt1},
    PciId{0x8A5C, &kIclGt15},
    PciId{0x8A5D, &kIclGt1},
    PciId{0x8A70, &kIclGt05, false},
    PciId{0x8A71, &kIclGt05},
    // INTEL_EHL_IDS, INTEL_JSL_IDS: Mesa's ehl_<subslices>x<EUs> per id.
    PciId{0x4541, &kEhl2x4},
    PciId{0x4551, &kEhl4x4},
    PciId{0x4555, &kEhl2x8},
    PciId{0x4557, &kEhl4x5},
    PciId{0x4570, &kEhl4x8},
    PciId{0x4571, &kEhl4x8},
    PciId{0x4E51, &kJsl4x4},
    PciId{0x4E55, &kJsl2x8},
    PciId{0x4E57, &kJsl4x5},
    PciId{0x4E61, &kJsl4x6},
    PciId{0x4E71, &kJsl4x8},
    // INTEL_TGL_GT1_IDS, INTEL_TGL_GT2_IDS.
    PciId{0x9A60, &kTglGt1},
    PciId{0x9A68, &kTglGt1},
    PciId{0x9A70, &kTglGt1},
    PciId{0x9A40, &kTglGt2},
    PciId{0x9A49, &kTglGt2},
    PciId{0x9A59, &kTglGt2},
    PciId{0x9A78, &kTglGt2},
    PciId{0x9AC0, &kTglGt2},
    PciId{0x9AC9, &kTglGt2},
    PciId{0x9AD9, &kTglGt2},
    PciId{0x9AF8, &kTglGt2},
    // INTEL_RKL_IDS: 0x4C8C is rkl_gt05 in Mesa; Mesa has no 0x4C80, which takes RKL GT1's
    // counts as the rest of the kernel's list does.
    PciId{0x4C80, &kRklGt1, false},
    PciId{0x4C8A, &kRklGt1},
    PciId{0x4C8B, &kRklGt1},
    PciId{0x4C8C, &kRklGt05},
    PciId{0x4C90, &kRklGt1},
    PciId{0x4C9A, &kRklGt1},
    // INTEL_DG1_IDS.
    PciId{0x4905, &kDg1},
    PciId{0x4906, &kDg1},
    PciId{0x4907, &kDg1},
    PciId{0x4908, &kDg1},
    PciId{0x4909, &kDg1},
    // INTEL_ADLS_IDS: 0x468B is adl_gt05 in Mesa.
    PciId{0x4680, &kAdlSGt1},
    PciId{0x4682, &kAdlSGt1},
    PciId{0x4688, &kAdlSGt1},
    PciId{0x468A, &kAdlSGt1},
    PciId{0x468B, &kAdlSGt05},
    PciId{0x4690, &kAdlSGt1},
    PciId{0x4692, &kAdlSGt1},
    PciId{0x4693, &kAdlSGt1},
    // INTEL_ADLP_IDS.
    PciId{0x46A0, &kAdlPGt2},
    PciId{0x46A1, &kAdlPGt2},
    PciId{0x46A2, &kAdlPGt2},
    PciId{0x46A3, &kAdlPGt2},
    PciId{0x46A6, &kAdlPGt2},
    PciId{0x46A8, &kAdlPGt2},
    PciId{0x46AA, &kAdlPGt2},
    PciId{0x462A, &kAdlPGt2},
    PciId{0x4626, &kAdlPGt2},
    PciId{0x4628, &kAdlPGt2},
    PciId{0x46B0, &kAdlPGt2},
    PciId{0x46B1, &kAdlPGt2},
    PciId{0x46B2, &kAdlPGt2},
    PciId{0x46B3, &kAdlPGt2},
    PciId{0x46C0, &kAdlPGt2},
    PciId{0x46C1, &kAdlPGt2},
    PciId{0x46C2, &kAdlPGt2},
    PciId{0x46C3, &kAdlPGt2},
    // INTEL_ADLN_IDS: adl_gt1 (2 dual subslices) in Mesa, 0x46D2 adl_gt05.
    PciId{0x46D0, &kAdlNGt1},
    PciId{0x46D1, &kAdlNGt1},
    PciId{0x46D2, &kAdlNGt05},
    PciId{0x46D3, &kAdlNGt1},
    PciId{0x46D4, &kAdlNGt1},
    // INTEL_RPLS_IDS (rpl), INTEL_RPLU_IDS and INTEL_RPLP_IDS (rpl_p).
    PciId{0xA780, &kRplS},
    PciId{0xA781, &kRplS},
    PciId{0xA782, &kRplS},
    PciId{0xA783, &kRplS},
    PciId{0xA788, &kRplS},
    PciId{0xA789, &kRplS},
    PciId{0xA78A, &kRplS},
    PciId{0xA78B, &kRplS},
    PciId{0xA721, &kRplP},
    PciId{0xA7A1, &kRplP},
    PciId{0xA7A9, &kRplP},
    PciId{0xA7AC, &kRplP},
    PciId{0xA7AD, &kRplP},
    PciId{0xA720, &kRplP},
    PciId{0xA7A0, &kRplP},
    PciId{0xA7A8, &kRplP},
    PciId{0xA7AA, &kRplP},
    PciId{0xA7AB, &kRplP},
    // INTEL_DG2_G10_IDS, INTEL_DG2_G11_IDS, INTEL_DG2_G12_IDS, INTEL_ATS_M150_IDS,
    // INTEL_ATS_M75_IDS [KIDS2]; counts assumed (the full die's), names Mesa's [MIDS].
    PciId{0x56A0, &kDg2G10, false, {}, "Intel(R) Arc(tm) A770 Graphics"},
    PciId{0x56A1, &kDg2G10, false, {}, "Intel(R) Arc(tm) A750 Graphics"},
    PciId{0x56A2, &kDg2G10, false, {}, "Intel(R) Arc(tm) A580 Graphics"},
    PciId{0x56BE, &kDg2G10, false, {}, "Intel(R) Arc(tm) A750E Graphics"},
    PciId{0x56BF, &kDg2G10, false, {}, "Intel(R) Arc(tm) A580E Graphics"},
    PciId{0x5690, &kDg2G10, false, {}, "Intel(R) Arc(tm) A770M Graphics"},
    PciId{0x5691, &kDg2G10, false, {}, "Intel(R) Arc(tm) A730M Graphics"},
    PciId{0x5692, &kDg2G10, false, {}, "Intel(R) Arc(tm) A550M Graphics"},
    PciId{0x56A5, &kDg2G11, false, {}, "Intel(R) Arc(tm) A380 Graphics"},
    PciId{0x56A6, &kDg2G11, false, {}, "Intel(R) Arc(tm) A310 Graphics"},
    PciId{0x56B0, &kDg2G11, false, {}, "Intel(R) Arc(tm) Pro A30M Graphics"},
    PciId{0x56B1, &kDg2G11, false, {}, "Intel(R) Arc(tm) Pro A40/A50 Graphics"},
    PciId{0x56BA, &kDg2G11, false, {}, "Intel(R) Arc(tm) A380E Graphics"},
    PciId{0x56BB, &kDg2G11, false, {}, "Intel(R) Arc(tm) A310E Graphics"},
    PciId{0x56BC, &kDg2G11, false, {}, "Intel(R) Arc(tm) A370E Graphics"},
    PciId{0x56BD, &kDg2G11, false, {}, "Intel(R) Arc(tm) A350E Graphics"},
    PciId{0x5693, &kDg2G11, false, {}, "Intel(R) Arc(tm) A370M Graphics"},
    PciId{0x5694, &kDg2G11, false, {}, "Intel(R) Arc(tm) A350M Graphics"},
    PciId{0x5695, &kDg2G11, false, {}, "Intel(R) Graphics"},
    PciId{0x56A3, &kDg2G12, false, {}, "Intel(R) Graphics"},
    PciId{0x56A4, &kDg2G12, false, {}, "Intel(R) Graphics"},
    PciId{0x56B2, &kDg2G12, false, {}, "Intel(R) Arc(tm) Pro A60M Graphics"},
    PciId{0x56B3, &kDg2G12, false, {}, "Intel(R) Arc(tm) Pro A60 Graphics"},
    PciId{0x5696, &kDg2G12, false, {}, "Intel(R) Arc(tm) A570M Graphics"},
    PciId{0x5697, &kDg2G12, false, {}, "Intel(R) Arc(tm) A530M Graphics"},
    PciId{0x56C0, &kAtsM150, false, {}, "Intel(R) Data Center GPU Flex 170"},
    PciId{0x56C2, &kAtsM150, false, {}, "Intel(R) Data Center GPU Flex 170V"},
    PciId{0x56C1, &kAtsM75, false, {}, "Intel(R) Data Center GPU Flex 140"},
    // INTEL_ARL_H_IDS (arl_h), INTEL_ARL_U_IDS and INTEL_ARL_S_IDS (arl_u); counts assumed.
    PciId{0x7D51, &kArlGt2, false},
    PciId{0x7DD1, &kArlGt2, false},
    PciId{0x7D41, &kArlGt1, false},
    PciId{0x7D67, &kArlGt1, false},
    PciId{0xB640, &kArlSNoIgt, false},
    // INTEL_MTL_IDS: mtl_u 0x7D40, 0x7D45, 0x7D60; mtl_h 0x7D55, 0x7DD5; counts assumed.
    PciId{0x7D40, &kMtlGt2, false, kMtl7D40MetricFile},
    PciId{0x7D45, &kMtlGt2, false},
    PciId{0x7D55, &kMtlGt3, false},
    PciId{0x7D60, &kMtlGt2, false},
    PciId{0x7DD5, &kMtlGt3, false},
    // INTEL_LNL_IDS, INTEL_BMG_G21_IDS, the rest of INTEL_BMG_IDS (G31), INTEL_PTL_IDS [KIDS2];
    // counts assumed.
    PciId{0x6420, &kLnl, false},
    PciId{0x64A0, &kLnl, false},
    PciId{0x64B0, &kLnl, false},
    PciId{0xE202, &kBmgG21, false},
    PciId{0xE209, &kBmgG21, false},
    PciId{0xE20B, &kBmgG21, false},
    PciId{0xE20C, &kBmgG21, false},
    PciId{0xE20D, &kBmgG21, false},
    PciId{0xE210, &kBmgG21, false},
    PciId{0xE211, &kBmgG21, false},
    PciId{0xE212, &kBmgG21, false},
    PciId{0xE216, &kBmgG21, false},
    PciId{0xE220, &kBmgG31, false},
    PciId{0xE221, &kBmgG31, false},
    PciId{0xE222, &kBmgG31, false},
    PciId{0xE223, &kBmgG31, false},
    PciId{0xB080, &kPtl, false},
    PciId{0xB081, &kPtl, false},
    PciId{0xB082, &kPtl, false},
    PciId{0xB083, &kPtl, false},
    PciId{0xB084, &kPtl, false},
    PciId{0xB085, &kPtl, false},
    PciId{0xB086, &kPtl, false},
    PciId{0xB087, &kPtl, false},
    PciId{0xB08F, &kPtl, false},
    PciId{0xB090, &kPtl, false},
    PciId{0xB0A0, &kPtl, false},
    PciId{0xB0B0, &kPtl, false},
};

// Known but not supported [KIDS2, XPCI3, XOA, IGTX2]. The reason names what oaprof lacks; none
// of these has an upstream Xe-core count, and NVL and CRI have no IGT metric file.
constexpr UnsupportedPlatform kPvc{
    "PVC",
    "Ponte Vecchio (Data Center GPU Max)",
    "INTEL_PVC_IDS",
    "none: xe keeps pvc_desc out of its id list, i915 lists no PVC id",
    "none without a driver (IGT has oa-pvc.xml for it)",
    "no kernel driver binds it, so there is no OA stream to open; oaprof also has no Xe-HPC "
    "(graphics 12.60) report format or topology"};
constexpr UnsupportedPlatform kWcl{
    "WCL",
    "Wildcat Lake",
    "INTEL_WCL_IDS",
    "xe, as a Panther Lake (ptl_desc), from linux 0755a4e3e809 on",
    "xe's Xe2+ PEC formats; IGT counts it as a PTL and loads oa-ptl.xml",
    "not in oaprof's table: no upstream table gives its Xe-core count, and PTL's metric file on "
    "it is IGT's choice, untested by oaprof; treating it as a Panther Lake would be a guess"};
constexpr UnsupportedPlatform kNvlS{
    "NVL",
    "Nova Lake S",
    "INTEL_NVLS_IDS",
    "xe (nvls_desc) behind xe.force_probe",
    "xe's Xe2+ PEC formats; IGT has no metric file for it",
    "no IGT metric file and no upstream Xe-core count: oaprof has nothing checked to profile it "
    "with"};
constexpr UnsupportedPlatform kNvlP{
    "NVL",    "Nova Lake P", "INTEL_NVLP_IDS", "xe (nvlp_desc) behind xe.force_probe",
    kNvlS.oa, kNvlS.reason};
constexpr UnsupportedPlatform kCri{"CRI",           "Crescent Island (discrete, no display)",
                                   "INTEL_CRI_IDS", "xe (cri_desc) behind xe.force_probe",
                                   kNvlS.oa,        kNvlS.reason};

// [NEO]: DG2 ids of Intel's compute runtime that no kernel list names.
constexpr UnsupportedPlatform kDg2Unbound{
    "DG2",
    "Arc Alchemist (DG2), an id only Intel's compute runtime lists",
    "none",
    "none: the id is in no list of include/drm/intel/pciids.h, so neither i915 nor xe binds it",
    "none without a driver; IGT maps the id to no metric file",
    "no kernel driver binds it, so there is no OA stream and no GPU to run kernels on; if a "
    "kernel binds it one day, oaprof will take it as the DG2 die its driver says"};

constexpr UnsupportedPciId kUnsupportedPciIds[] = {
    {0x0B69, &kPvc},        {0x0B6E, &kPvc},        {0x0BD4, &kPvc},        {0x0BD5, &kPvc},
    {0x0BD6, &kPvc},        {0x0BD7, &kPvc},        {0x0BD8, &kPvc},        {0x0BD9, &kPvc},
    {0x0BDA, &kPvc},        {0x0BDB, &kPvc},        {0x0BE0, &kPvc},        {0x0BE1, &kPvc},
    {0x0BE5, &kPvc},        {0xFD80, &kWcl},        {0xFD81, &kWcl},        {0xD740, &kNvlS},
    {0xD741, &kNvlS},       {0xD742, &kNvlS},       {0xD743, &kNvlS},       {0xD745, &kNvlS},
    {0xD74A, &kNvlS},       {0xD74B, &kNvlS},       {0x674C, &kCri},        {0x674D, &kCri},
    {0x674E, &kCri},        {0x674F, &kCri},        {0x6750, &kCri},        {0xD750, &kNvlP},
    {0xD751, &kNvlP},       {0xD752, &kNvlP},       {0xD753, &kNvlP},       {0xD754, &kNvlP},
    {0xD755, &kNvlP},       {0xD756, &kNvlP},       {0xD757, &kNvlP},       {0xD75F, &kNvlP},
    {0x4F80, &kDg2Unbound}, {0x4F81, &kDg2Unbound}, {0x4F82, &kDg2Unbound}, {0x4F83, &kDg2Unbound},
    {0x4F84, &kDg2Unbound}, {0x4F85, &kDg2Unbound}, {0x4F86, &kDg2Unbound}, {0x4F87, &kDg2Unbound},
    {0x4F88, &kDg2Unbound}, {0x56AF, &kDg2Unbound},
};

// Look-up order by name: the first platform with a file is its representative.
constexpr std::array kPlatforms{
    &kHswGt2, &kBdwGt2, &kChv,    &kSklGt2, &kSklGt3, &kSklGt4, &kBxt,    &kGlk,    &kKblGt2,
    &kKblGt3, &kCflGt2, &kCflGt3, &kIclGt2, &kEhl4x8, &kTglGt1, &kTglGt2, &kRklGt1, &kAdlPGt2,
    &kDg1,    &kDg2G11, &kDg2G12, &kDg2G10, &kMtlGt2, &kMtlGt3, &kLnl,    &kBmgG21, &kPtl};

constexpr std::array<std::string_view, kPlatforms.size()> kPlatformNames = [] {
  std::array<std::string_view, kPlatforms.size()> names{};
  for (std::size_t i = 0; i < kPlatforms.size(); ++i) names[i] = kPlatforms[i]->metrics_file;
  return names;
}();

}  // namespace

std::string_view generation_name(Generation gen) {
  switch (gen) {
    case Generation::kGen7_5:
      return "Gen7.5";
    case Generation::kGen8:
      return "Gen8";
    case Generation::kGen9:
      return "Gen9";
    case Generation::kGen11:
      return "Gen11";
    case Generation::kGen12:
      return "Gen12";
    case Generation::kXeHpg:
      return "Xe-HPG";
    case Generation::kXeLpg:
      return "Xe-LPG";
    case Generation::kXe2:
      return "Xe2";
  }
  return "unknown";
}

bool is_gen12_family(Generation gen) { return gen == Generation::kGen12 || is_xehp_oa(gen); }

bool is_xehp_oa(Generation gen) { return gen == Generation::kXeHpg || gen == Generation::kXeLpg; }

bool counts_xe_cores(Generation gen) { return is_gen12_family(gen) || gen == Generation::kXe2; }

std::string_view timestamp_rule_name(TimestampRule rule) {
  switch (rule) {
    case TimestampRule::kFixed:
      return "fixed";
    case TimestampRule::kCrystalCtc:
      return "crystal/CTC";
  }
  return "unknown";
}

std::string_view kernel_driver_name(KernelDriver driver) {
  switch (driver) {
    case KernelDriver::kI915:
      return "i915";
    case KernelDriver::kXe:
      return "xe";
  }
  return "unknown";
}

std::string gt_label(const Platform& platform) {
  if (!platform.gt_name.empty()) return std::string(platform.gt_name);
  return fmt::format("GT{}", platform.gt);
}

std::string no_igt_metrics_reason(const Platform& platform) {
  if (!platform.metrics_file.empty()) return {};
  return fmt::format(
      "IGT describes no metric set for {} {} (IGT loads sets by the kernel's GT, and has none for "
      "this one)",
      platform.codename, gt_label(platform));
}

std::span<const PciId> known_pci_ids() { return kPciIds; }

const PciId* find_pci_id(std::uint16_t device_id) {
  for (const PciId& id : kPciIds) {
    if (id.device == device_id) return &id;
  }
  return nullptr;
}

std::span<const UnsupportedPciId> known_unsupported_pci_ids() { return kUnsupportedPciIds; }

const UnsupportedPciId* find_unsupported_pci_id(std::uint16_t device_id) {
  for (const UnsupportedPciId& id : kUnsupportedPciIds) {
    if (id.device == device_id) return &id;
  }
  return nullptr;
}

std::string unsupported_pci_id_message(std::uint16_t device_id) {
  const UnsupportedPciId* id = find_unsupported_pci_id(device_id);
  if (id == nullptr) return {};
  return fmt::format(
      "PCI device 8086:{:04x} is a {} ({}), which oaprof knows but does not "
      "support: {}",
      device_id, id->platform->name, id->platform->codename, id->platform->reason);
}

std::optional<Platform> platform_for_pci_id(std::uint16_t device_id) {
  if (const PciId* id = find_pci_id(device_id)) return *id->platform;
  return std::nullopt;
}

std::optional<std::uint16_t> parse_pci_device_id(std::string_view text) {
  if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    const std::string_view vendor = text.substr(0, colon);
    if (vendor != "8086" && vendor != "0x8086") return std::nullopt;
    text.remove_prefix(colon + 1);
  }
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > 4) return std::nullopt;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

Platform require_platform_for_pci_id(std::uint16_t device_id) {
  if (auto p = platform_for_pci_id(device_id)) return *p;
  if (const std::string why = unsupported_pci_id_message(device_id); !why.empty()) {
    throw std::invalid_argument(why + "; use --device sim meanwhile");
  }
  throw std::invalid_argument(fmt::format(
      "PCI device 8086:{:04x} is not an Intel GPU oaprof knows (Haswell through Panther Lake, "
      "DG2 and ATS-M); "
      "give the platform with --platform NAME ({}) or use --device sim",
      device_id, fmt::join(kPlatformNames, ", ")));
}

std::optional<Platform> platform_by_name(std::string_view metrics_file) {
  if (metrics_file.empty()) return std::nullopt;
  for (const Platform* p : kPlatforms) {
    if (p->metrics_file == metrics_file) return *p;
  }
  return std::nullopt;
}

Platform require_platform_by_name(std::string_view metrics_file) {
  if (auto p = platform_by_name(metrics_file)) return *p;
  throw std::invalid_argument(fmt::format("unknown platform '{}'; valid: {}", metrics_file,
                                          fmt::join(kPlatformNames, ", ")));
}

std::span<const std::string_view> platform_names() { return kPlatformNames; }

const Platform& simulated_platform() { return kKblGt2; }

}  // namespace oaprof::oa
