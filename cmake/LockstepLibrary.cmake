# lockstep_library(<module> <sources>...): the library lockstep_<module>, known as
# lockstep::<module>, with its public headers under <module>/include/lockstep/<module>/ (from the
# build tree and installed alike), installed and exported. Each module then states its own links.
function(lockstep_library module)
  set(target lockstep_${module})
  add_library(${target} ${ARGN})
  add_library(lockstep::${module} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${module})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${target} EXPORT lockstepTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
